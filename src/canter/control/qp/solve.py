"""`solve`: the public entry point. Validates and scales the batch, runs the chosen method for a
fixed number of iterations, maps the result back and classifies every problem (`QPStatus`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import torch

from canter.control.qp import kernel as qp_kernel
from canter.control.qp.admm import admm
from canter.control.qp.info import QPInfo, QPStatus
from canter.control.qp.ipm import ipm, ipm_step
from canter.control.qp.problem import Rows, check_shapes, invalid_problems, sanitize_and_scale
from canter.control.qp.residuals import primal_residual
from canter.core.errors import CanterError

DEFAULT_ITERATIONS = {"ipm": 20, "admm": 200}
_compiled_step: Callable | None = None


def _ipm_step(compile_step: bool) -> Callable:
    """The IPM iteration, eager or wrapped once in torch.compile (compiled per shape and dtype)."""
    global _compiled_step
    if not compile_step:
        return ipm_step
    if _compiled_step is None:
        _compiled_step = torch.compile(ipm_step, dynamic=False)
    return _compiled_step


def solve(
    P: torch.Tensor,
    q: torch.Tensor,
    A: torch.Tensor,
    l: torch.Tensor,
    u: torch.Tensor,
    *,
    x0: torch.Tensor | None = None,
    y0: torch.Tensor | None = None,
    method: Literal["ipm", "admm"] = "ipm",
    iterations: int | None = None,
    eps_abs: float = 1e-5,
    eps_rel: float = 0.0,
    eps_infeasible: float = 1e-5,
    scaling_iterations: int = 10,
    regularization: float = 1e-10,
    eq_gap: float = 1e-9,
    rho: float = 0.1,
    sigma: float = 1e-6,
    alpha: float = 1.6,
    rho_updates: tuple[int, ...] = (25, 50, 100),
    compile: bool = False,
    kernel: Literal["auto", "fused", "torch"] = "auto",
) -> tuple[torch.Tensor, QPInfo]:
    """Solve B convex QPs  min ½xᵀPx + qᵀx  s.t.  l ≤ Ax ≤ u  at once, on the tensors' device.

    Every problem runs the same fixed number of iterations and nothing is read back to the host,
    so the cost is data independent and the call can be queued asynchronously (or graph-captured).

    Args:
        P: (B, n, n) symmetric positive semidefinite costs.
        q: (B, n) linear costs.
        A: (B, m, n) constraint rows (an identity row per variable gives plain bounds). An A
            shared by the batch may be passed as `A0.expand(B, m, n)`: the solver then uses GEMMs.
        l, u: (B, m) bounds; ±inf allowed; l = u makes an equality row.
        x0, y0: (B, n) and (B, m) warm start, e.g. the previous control step's x and `info.y`.
        method: "ipm" (default): primal-dual interior point, Mehrotra predictor-corrector; reaches
            1e-5 KKT residual on the GRF problem in 20 iterations. "admm": OSQP's ADMM, cheaper per
            iteration but needs hundreds of iterations for tight accuracy; best with warm starts.
        iterations: the fixed budget (default 20 for ipm, 200 for admm).
        eps_abs, eps_rel: tolerances that decide SOLVED vs MAX_ITER (never when to stop).
        eps_infeasible: tolerance of the primal/dual infeasibility certificates.
        scaling_iterations: Ruiz equilibration passes (0 = none).
        regularization, eq_gap: ipm only: δ added to the Newton matrix; the relative half-width of
            the interval that stands for an equality row.
        rho, sigma, alpha, rho_updates: admm only: initial step size, proximal term, relaxation,
            iterations at which ρ is adapted (each costs a refactorization).
        compile: ipm only: run the iteration through torch.compile (fuses the elementwise work;
            the first call per shape compiles for minutes; measured 1.3x on a 2-core CPU).
        kernel: ipm only: "fused" runs the whole solve (validation, scaling, iterations,
            residuals, status) in the compiled CPU kernel (`qp.kernel`: SIMD over 16 problems,
            OpenMP over the batch; same iterates to round-off), "torch" in torch ops, "auto"
            (default) the kernel for float32/float64 CPU tensors when it builds (needs a C
            compiler; built once and cached) and compile is off, else torch.

    Returns:
        x: (B, n) solutions, finite for every problem (zero for INVALID ones).
        info: `QPInfo` with per-problem status, residuals and duals y (B, m).
    """
    batch, n, _ = check_shapes(P, q, A, l, u)
    if method not in DEFAULT_ITERATIONS:
        raise CanterError(f"qp.solve: method must be 'ipm' or 'admm', got {method!r}")
    iterations = DEFAULT_ITERATIONS[method] if iterations is None else iterations
    if iterations < 1:
        raise CanterError(f"qp.solve: iterations must be >= 1, got {iterations}")
    if kernel not in ("auto", "fused", "torch"):
        raise CanterError(f"qp.solve: kernel must be 'auto', 'fused' or 'torch', got {kernel!r}")
    fused = method == "ipm" and not compile and kernel != "torch" and qp_kernel.available(P)
    if kernel == "fused" and not fused:
        raise CanterError(f"qp.solve: kernel='fused' needs method='ipm', compile=False and float CPU tensors "
                          f"with a C compiler (got {method}, compile={compile}, {P.dtype} on {P.device})")
    if fused:
        x, y, status, prim, dual = qp_kernel.solve(P, q, A, l, u, x0, y0, iterations, scaling_iterations,
                                                   regularization, eq_gap, eps_abs, eps_rel, eps_infeasible)
        return x, QPInfo(status=status, primal_residual=prim, dual_residual=dual, y=y, iterations=iterations)
    invalid = invalid_problems(P, q, A, l, u)
    s = sanitize_and_scale(P, q, A, l, u, invalid, scaling_iterations)
    x = torch.zeros(batch, n, dtype=P.dtype, device=P.device) if x0 is None else x0.to(P) / s.D
    x = torch.where(torch.isfinite(x), x, 0.0)
    y = None if y0 is None else torch.where(torch.isfinite(y0), y0.to(P), 0.0) * s.cost / s.E
    if method == "ipm":
        x, y, dx, dy = ipm(s, x, y, iterations, regularization, eq_gap, step=_ipm_step(compile))
    else:
        x, y, dx, dy = admm(s, x, y, iterations, rho, sigma, alpha, rho_updates)
    return _finish(P, q, A, l, u, invalid, s.D * x, s.E * y / s.cost, s.D * dx, s.E * dy / s.cost,
                   iterations, eps_abs, eps_rel, eps_infeasible)


def _finish(P, q, A, l, u, invalid, x, y, dx, dy, iterations, eps_abs, eps_rel, eps_inf):
    """Residuals, certificates and status in the problem's own units."""
    rows = Rows.of(torch.where(torch.isfinite(A), A, 0.0) if not Rows.of(A).shared else A.nan_to_num())
    bad = invalid | ~torch.isfinite(x).all(-1) | ~torch.isfinite(y).all(-1)
    x = torch.where(bad[:, None], 0.0, x)
    y = torch.where(bad[:, None], 0.0, y)
    P = torch.where(torch.isfinite(P), P, 0.0)
    q = torch.where(torch.isfinite(q), q, 0.0)
    Ax, Px, Aty = rows.mv(x), (P @ x[..., None])[..., 0], rows.rmv(y)
    prim = primal_residual(A.nan_to_num(), l, u, x)
    dual = (Px + q + Aty).abs().amax(-1)
    tol_prim = eps_abs + eps_rel * Ax.abs().amax(-1)
    tol_dual = eps_abs + eps_rel * torch.maximum(torch.maximum(Px.abs().amax(-1), Aty.abs().amax(-1)), q.abs().amax(-1))
    solved = (prim <= tol_prim) & (dual <= tol_dual)
    primal_inf = _primal_certificate(rows, l, u, torch.where(torch.isfinite(dy), dy, 0.0), eps_inf)
    dual_inf = _dual_certificate(P, q, rows, l, u, torch.where(torch.isfinite(dx), dx, 0.0), eps_inf)
    status = torch.full_like(invalid, int(QPStatus.MAX_ITER), dtype=torch.int64)
    status = torch.where(dual_inf & ~solved, int(QPStatus.DUAL_INFEASIBLE), status)
    status = torch.where(primal_inf & ~solved, int(QPStatus.PRIMAL_INFEASIBLE), status)
    status = torch.where(solved, int(QPStatus.SOLVED), status)
    status = torch.where(bad, int(QPStatus.INVALID), status)
    return x, QPInfo(
        status=status,
        primal_residual=torch.where(bad, float("inf"), prim),
        dual_residual=torch.where(bad, float("inf"), dual),
        y=y,
        iterations=iterations,
    )


def _primal_certificate(rows: Rows, l, u, dy, eps) -> torch.Tensor:
    """δy ≠ 0 with Aᵀδy ≈ 0 and uᵀδy⁺ + lᵀδy⁻ < 0 (Farkas).

    The candidate δy (the ADMM's last dual step, or the IPM's diverging multipliers) is first
    projected on the null space of Aᵀ, then on the polar of the bounds' recession cone; the tests
    then hold for the projected vector, so a flagged problem carries a genuine certificate.
    """
    n = rows.A.shape[-1]
    eye = torch.eye(n, dtype=dy.dtype, device=dy.device)
    gram = rows.gram(torch.zeros(dy.shape[0], n, n, dtype=dy.dtype, device=dy.device), torch.ones_like(dy))
    shift = 1e-12 * gram.diagonal(dim1=1, dim2=2).amax(-1)[:, None, None] + torch.finfo(dy.dtype).tiny ** 0.5
    L, info = torch.linalg.cholesky_ex(gram + shift * eye)
    L = torch.where((info == 0)[:, None, None], L, eye)
    dy = dy - rows.mv(torch.cholesky_solve(rows.rmv(dy)[..., None], L)[..., 0])
    dy = torch.where(torch.isinf(u), dy.clamp(max=0.0), dy)
    dy = torch.where(torch.isinf(l), dy.clamp(min=0.0), dy)
    norm = dy.abs().amax(-1)
    support = torch.where(dy > 0, torch.where(torch.isinf(u), 0.0, u) * dy, 0.0).sum(-1)
    support = support + torch.where(dy < 0, torch.where(torch.isinf(l), 0.0, l) * dy, 0.0).sum(-1)
    Aty = rows.rmv(dy).abs().amax(-1)
    return (norm > 0) & (Aty <= eps * norm) & (support < -eps * norm)


def _dual_certificate(P, q, rows: Rows, l, u, dx, eps) -> torch.Tensor:
    """δx ≠ 0 with Pδx ≈ 0, qᵀδx < 0 and Aδx in the recession cone of [l, u]."""
    norm = dx.abs().amax(-1)
    Adx = rows.mv(dx)
    lim = eps * norm[:, None]
    in_cone = (torch.isinf(u) | (Adx <= lim)) & (torch.isinf(l) | (Adx >= -lim))
    return (
        (norm > 0)
        & ((P @ dx[..., None])[..., 0].abs().amax(-1) <= eps * norm)
        & ((q * dx).sum(-1) < -eps * norm)
        & in_cone.all(-1)
    )
