"""Batched ADMM (the OSQP iteration) for B small dense convex QPs, in torch, without host syncs.

    minimize ½xᵀPx + qᵀx   subject to   l ≤ Ax ≤ u

Every problem runs the same fixed number of iterations; nothing in the loop reads a tensor back to
Python, so the whole solve can be queued on a GPU or captured in a graph.
"""

from __future__ import annotations

import torch

from canter.control.qp.info import QPInfo, QPStatus
from canter.control.qp.residuals import dual_residual, primal_residual
from canter.core.errors import CanterError

RHO_MIN, RHO_MAX = 1e-6, 1e6
RHO_EQ_FACTOR = 1e3


def _mv(M: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    return (M @ v[..., None])[..., 0]


def _check_shapes(P, q, A, l, u) -> tuple[int, int, int]:
    if P.ndim != 3 or P.shape[1] != P.shape[2]:
        raise CanterError(f"qp.solve: P must be (B, n, n), got {tuple(P.shape)}")
    batch, n = P.shape[0], P.shape[1]
    if A.ndim != 3 or A.shape[0] != batch or A.shape[2] != n:
        raise CanterError(f"qp.solve: A must be (B, m, n) = ({batch}, m, {n}), got {tuple(A.shape)}")
    m = A.shape[1]
    if n == 0 or m == 0:
        raise CanterError("qp.solve: need n >= 1 variables and m >= 1 rows (a row with bounds ±inf is free)")
    for name, t, shape in (("q", q, (batch, n)), ("l", l, (batch, m)), ("u", u, (batch, m))):
        if tuple(t.shape) != shape:
            raise CanterError(f"qp.solve: {name} must be {shape}, got {tuple(t.shape)}")
    if not P.dtype.is_floating_point:
        raise CanterError(f"qp.solve: floating-point tensors required, got {P.dtype}")
    return batch, n, m


def solve(
    P: torch.Tensor,
    q: torch.Tensor,
    A: torch.Tensor,
    l: torch.Tensor,
    u: torch.Tensor,
    *,
    x0: torch.Tensor | None = None,
    y0: torch.Tensor | None = None,
    iterations: int = 100,
    rho: float = 0.1,
    sigma: float = 1e-6,
    alpha: float = 1.6,
    rho_updates: tuple[int, ...] = (25, 50),
    scaling_iterations: int = 10,
    eps_abs: float = 1e-5,
    eps_rel: float = 0.0,
    eps_infeasible: float = 1e-5,
) -> tuple[torch.Tensor, QPInfo]:
    """Solve B convex QPs min ½xᵀPx + qᵀx s.t. l ≤ Ax ≤ u at once (see module docstring).

    Args:
        P: (B, n, n) symmetric positive semidefinite costs.
        q: (B, n) linear costs.
        A: (B, m, n) constraint matrices (an identity row per variable gives plain bounds).
        l, u: (B, m) bounds; ±inf allowed, l = u gives an equality row.
        x0, y0: (B, n), (B, m) optional warm start (e.g. the previous control step's x and info.y).
        iterations: fixed ADMM iteration budget (no early exit: the cost is data independent).
        rho: initial ADMM step size; adapted per problem at the iterations in `rho_updates`.
        sigma, alpha: OSQP's proximal term and relaxation factor.
        scaling_iterations: Ruiz equilibration passes over [P Aᵀ; A 0] (0 = no scaling).
        eps_abs, eps_rel: tolerances that decide SOLVED vs MAX_ITER (not when to stop).
        eps_infeasible: tolerance of the infeasibility certificates.

    Returns:
        x (B, n), finite for every problem, and a `QPInfo`.
    """
    batch, n, m = _check_shapes(P, q, A, l, u)
    dtype, device = P.dtype, P.device
    invalid = _invalid(P, q, A, l, u)
    P, q, A, l, u = _sanitize(invalid, P, q, A, l, u)
    Ps, qs, As, ls, us, D, E, cost = _ruiz(P, q, A, l, u, scaling_iterations)

    x = torch.zeros(batch, n, dtype=dtype, device=device) if x0 is None else x0.to(dtype) / D
    x = torch.where(torch.isfinite(x), x, 0.0)
    z = torch.minimum(torch.maximum(_mv(As, x), ls), us)
    y = torch.zeros(batch, m, dtype=dtype, device=device) if y0 is None else y0.to(dtype) * cost / E
    y = torch.where(torch.isfinite(y), y, 0.0)
    equality = (us - ls).abs() < 1e-4
    free = torch.isinf(ls) & torch.isinf(us)
    rho_bar = torch.full((batch, 1), rho, dtype=dtype, device=device)
    eye = torch.eye(n, dtype=dtype, device=device)

    def factor(rho_bar: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        rho_vec = torch.where(equality, rho_bar * RHO_EQ_FACTOR, rho_bar)
        rho_vec = torch.where(free, RHO_MIN, rho_vec)
        K = Ps + sigma * eye + As.transpose(1, 2) @ (rho_vec[..., None] * As)
        L, info = torch.linalg.cholesky_ex(K)
        L = torch.where((info == 0)[:, None, None], L, eye)
        return torch.cholesky_inverse(L), rho_vec, info != 0

    Kinv, rho_vec, factor_failed = factor(rho_bar)
    x_prev, y_prev = x, y
    for k in range(iterations):
        if k in rho_updates:
            rho_bar = _adapt_rho(Ps, qs, As, x, z, y, rho_bar)
            Kinv, rho_vec, failed = factor(rho_bar)
            factor_failed = factor_failed | failed
        x_prev, y_prev = x, y
        rhs = sigma * x - qs + _mv(As.transpose(1, 2), rho_vec * z - y)
        x_tilde = _mv(Kinv, rhs)
        z_tilde = _mv(As, x_tilde)
        x = alpha * x_tilde + (1 - alpha) * x
        z_relaxed = alpha * z_tilde + (1 - alpha) * z
        z_new = torch.minimum(torch.maximum(z_relaxed + y / rho_vec, ls), us)
        y = y + rho_vec * (z_relaxed - z_new)
        z = z_new

    x_out, y_out = D * x, E * y / cost
    x_out = torch.where(torch.isfinite(x_out), x_out, 0.0)
    y_out = torch.where(torch.isfinite(y_out), y_out, 0.0)
    prim = primal_residual(A, l, u, x_out)
    dual = dual_residual(P, q, A, x_out, y_out)
    Ax, Px, Aty = _mv(A, x_out), _mv(P, x_out), _mv(A.transpose(1, 2), y_out)
    tol_prim = eps_abs + eps_rel * Ax.abs().amax(-1)
    tol_dual = eps_abs + eps_rel * torch.stack(
        (Px.abs().amax(-1), Aty.abs().amax(-1), q.abs().amax(-1))
    ).amax(0)
    solved = (prim <= tol_prim) & (dual <= tol_dual)
    primal_inf = _primal_infeasible(A, l, u, E * (y - y_prev) / cost, eps_infeasible)
    dual_inf = _dual_infeasible(P, q, A, l, u, D * (x - x_prev), eps_infeasible)
    status = torch.full((batch,), int(QPStatus.MAX_ITER), dtype=torch.int64, device=device)
    status = torch.where(dual_inf & ~solved, int(QPStatus.DUAL_INFEASIBLE), status)
    status = torch.where(primal_inf & ~solved, int(QPStatus.PRIMAL_INFEASIBLE), status)
    status = torch.where(solved, int(QPStatus.SOLVED), status)
    bad = invalid | factor_failed | ~torch.isfinite(D * x).all(-1)
    status = torch.where(bad, int(QPStatus.INVALID), status)
    x_out = torch.where(bad[:, None], 0.0, x_out)
    y_out = torch.where(bad[:, None], 0.0, y_out)
    return x_out, QPInfo(
        status=status,
        primal_residual=torch.where(bad, float("inf"), prim),
        dual_residual=torch.where(bad, float("inf"), dual),
        y=y_out,
        iterations=iterations,
    )


def _invalid(P, q, A, l, u) -> torch.Tensor:
    """(B,) bool: problems whose data cannot define a convex QP."""
    finite = torch.isfinite(P).flatten(1).all(-1) & torch.isfinite(q).all(-1) & torch.isfinite(A).flatten(1).all(-1)
    bounds_ok = ~(torch.isnan(l) | torch.isnan(u) | (l > u) | (l == float("inf")) | (u == -float("inf")))
    P_clean = torch.where(torch.isfinite(P), P, 0.0)
    scale = P_clean.abs().flatten(1).amax(-1)
    asym = (P_clean - P_clean.transpose(1, 2)).abs().flatten(1).amax(-1)
    eye = torch.eye(P.shape[1], dtype=P.dtype, device=P.device)
    shift = (1e-7 * scale + torch.finfo(P.dtype).tiny ** 0.5)[:, None, None]
    _, not_psd = torch.linalg.cholesky_ex(0.5 * (P_clean + P_clean.transpose(1, 2)) + shift * eye)
    eps = torch.finfo(P.dtype).eps
    return ~finite | ~bounds_ok.all(-1) | (asym > 1e3 * eps * (1 + scale)) | (not_psd != 0)


def _sanitize(invalid, P, q, A, l, u):
    """Replace invalid problems by min ½‖x‖² (x = 0) so they cannot poison the batch's arithmetic."""
    bad = invalid[:, None]
    eye = torch.eye(P.shape[1], dtype=P.dtype, device=P.device)
    P = torch.where(bad[..., None], eye, 0.5 * (P + P.transpose(1, 2)))
    A = torch.where(bad[..., None], 0.0, A)
    q = torch.where(bad, 0.0, q)
    l = torch.where(bad, -float("inf"), l)
    u = torch.where(bad, float("inf"), u)
    return P, q, A, l, u


def _ruiz(P, q, A, l, u, passes: int):
    """Ruiz equilibration: P̄ = c·DPD, q̄ = c·Dq, Ā = EAD, l̄ = El, ū = Eu; x = Dx̄, y = Eȳ/c."""
    batch, n, m = P.shape[0], P.shape[1], A.shape[1]
    D = torch.ones(batch, n, dtype=P.dtype, device=P.device)
    E = torch.ones(batch, m, dtype=P.dtype, device=P.device)
    cost = torch.ones(batch, 1, dtype=P.dtype, device=P.device)
    for _ in range(passes):
        col = torch.maximum(P.abs().amax(1), A.abs().amax(1))
        row = A.abs().amax(2)
        d = 1.0 / torch.sqrt(torch.where(col < 1e-4, 1.0, col.clamp(max=1e4)))
        e = 1.0 / torch.sqrt(torch.where(row < 1e-4, 1.0, row.clamp(max=1e4)))
        P = d[:, :, None] * P * d[:, None, :]
        A = e[:, :, None] * A * d[:, None, :]
        q = d * q
        D, E = D * d, E * e
    if passes > 0:
        mean_col = P.abs().amax(1).mean(-1, keepdim=True)
        gamma = torch.maximum(mean_col, q.abs().amax(-1, keepdim=True))
        gamma = 1.0 / torch.where(gamma < 1e-4, 1.0, gamma.clamp(max=1e4))
        P, q, cost = gamma[..., None] * P, gamma * q, gamma
    return P, q, A, E * l, E * u, D, E, cost


def _adapt_rho(P, q, A, x, z, y, rho_bar):
    """OSQP's rule ρ ← ρ·sqrt((‖r_prim‖/scale_prim) / (‖r_dual‖/scale_dual)), per problem."""
    Ax, Px, Aty = _mv(A, x), _mv(P, x), _mv(A.transpose(1, 2), y)
    tiny = torch.finfo(P.dtype).tiny ** 0.5
    prim = (Ax - z).abs().amax(-1, keepdim=True)
    dual = (Px + q + Aty).abs().amax(-1, keepdim=True)
    prim_scale = torch.maximum(Ax.abs().amax(-1, keepdim=True), z.abs().amax(-1, keepdim=True))
    dual_scale = torch.stack((Px.abs().amax(-1), Aty.abs().amax(-1), q.abs().amax(-1))).amax(0)[:, None]
    ratio = (prim / (prim_scale + tiny)) / (dual / (dual_scale + tiny) + tiny)
    new = rho_bar * torch.sqrt(ratio)
    return torch.where(torch.isfinite(new), new, rho_bar).clamp(RHO_MIN, RHO_MAX)


def _primal_infeasible(A, l, u, dy, eps) -> torch.Tensor:
    """OSQP's certificate: δy ≠ 0 with Aᵀδy ≈ 0 and uᵀδy⁺ + lᵀδy⁻ < 0."""
    dy = torch.where(torch.isinf(u), dy.clamp(max=0.0), dy)
    dy = torch.where(torch.isinf(l), dy.clamp(min=0.0), dy)
    norm = dy.abs().amax(-1)
    support = (torch.where(dy > 0, u, 0.0) * dy.clamp(min=0.0)).nan_to_num(0.0).sum(-1) + (
        torch.where(dy < 0, l, 0.0) * dy.clamp(max=0.0)
    ).nan_to_num(0.0).sum(-1)
    Aty = _mv(A.transpose(1, 2), dy).abs().amax(-1)
    return (norm > 1e-30) & (Aty <= eps * norm) & (support <= -eps * norm)


def _dual_infeasible(P, q, A, l, u, dx, eps) -> torch.Tensor:
    """OSQP's certificate: δx ≠ 0 with Pδx ≈ 0, qᵀδx < 0 and Aδx in the recession cone of [l, u]."""
    norm = dx.abs().amax(-1)
    Adx = _mv(A, dx)
    lim = eps * norm[:, None]
    upper_ok = torch.where(torch.isinf(u), True, Adx <= lim)
    lower_ok = torch.where(torch.isinf(l), True, Adx >= -lim)
    cone = (upper_ok & lower_ok).all(-1)
    return (
        (norm > 1e-30)
        & (_mv(P, dx).abs().amax(-1) <= eps * norm)
        & ((q * dx).sum(-1) <= -eps * norm)
        & cone
    )
