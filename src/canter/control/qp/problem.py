"""Shared pieces of the batched QP solvers: shape checks, per-problem validation, Ruiz scaling and
matrix-vector products that use one GEMM when the constraint matrix is shared by the batch."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from canter.core.errors import CanterError


def check_shapes(P, q, A, l, u) -> tuple[int, int, int]:
    """Raise a one-line CanterError unless P (B,n,n), q (B,n), A (B,m,n), l, u (B,m); return B, n, m."""
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
    for name, t in (("P", P), ("q", q), ("A", A), ("l", l), ("u", u)):
        if not t.dtype.is_floating_point or t.dtype != P.dtype or t.device != P.device:
            raise CanterError(f"qp.solve: {name} must be a {P.dtype} tensor on {P.device}, got {t.dtype} on {t.device}")
    return batch, n, m


class Rows:
    """The constraint matrix of a batch: per problem (B, m, n), or one (m, n) shared by every problem.

    A batch whose A is an `expand`ed view (batch stride 0, e.g. `grf_problem`'s) is shared: then
    Ax and Aᵀy are single GEMMs and Aᵀ diag(d) A is one GEMM against the precomputed row outer
    products, instead of B small products.
    """

    def __init__(self, A: torch.Tensor, shared: bool):
        self.shared = shared
        self.A = A[0] if shared else A
        self._outer: torch.Tensor | None = None

    @staticmethod
    def of(A: torch.Tensor) -> Rows:
        return Rows(A, shared=A.shape[0] > 0 and A.stride(0) == 0)

    def mv(self, x: torch.Tensor) -> torch.Tensor:
        """(B, n) → (B, m): Ax."""
        return x @ self.A.T if self.shared else (self.A @ x[..., None])[..., 0]

    def rmv(self, y: torch.Tensor) -> torch.Tensor:
        """(B, m) → (B, n): Aᵀy."""
        return y @ self.A if self.shared else (y[:, None, :] @ self.A)[:, 0, :]

    def gram(self, P: torch.Tensor, d: torch.Tensor) -> torch.Tensor:
        """(B, n, n): P + Aᵀ diag(d) A for d (B, m)."""
        if self.shared:
            if self._outer is None:
                n = self.A.shape[1]
                self._outer = (self.A[:, :, None] * self.A[:, None, :]).reshape(-1, n * n)
            return torch.addmm(P.reshape(P.shape[0], -1), d, self._outer).view_as(P)
        return torch.baddbmm(P, self.A.transpose(1, 2), d[:, :, None] * self.A)


def invalid_problems(P, q, A, l, u) -> torch.Tensor:
    """(B,) bool: data that cannot define a convex QP (non-finite, l > u, l = +inf, u = −inf,
    asymmetric or non-PSD P). Computed without host syncs."""
    finite = torch.isfinite(P).flatten(1).all(-1) & torch.isfinite(q).all(-1)
    finite = finite & torch.isfinite(A).flatten(1).all(-1)
    bounds_ok = ~(torch.isnan(l) | torch.isnan(u) | (l > u) | (l == float("inf")) | (u == -float("inf")))
    P_clean = torch.where(torch.isfinite(P), P, 0.0)
    scale = P_clean.abs().flatten(1).amax(-1)
    asym = (P_clean - P_clean.transpose(1, 2)).abs().flatten(1).amax(-1)
    eye = torch.eye(P.shape[1], dtype=P.dtype, device=P.device)
    eps = torch.finfo(P.dtype).eps
    shift = (1e3 * eps * scale + torch.finfo(P.dtype).tiny ** 0.5)[:, None, None]
    _, not_psd = torch.linalg.cholesky_ex(0.5 * (P_clean + P_clean.transpose(1, 2)) + shift * eye)
    return ~finite | ~bounds_ok.all(-1) | (asym > 1e3 * eps * (1 + scale)) | (not_psd != 0)


@dataclass
class Scaled:
    """A sanitized, Ruiz-equilibrated batch: P̄ = c·DPD, q̄ = c·Dq, Ā = EAD, l̄ = El, ū = Eu.

    A solution (x̄, ȳ) of the scaled problem maps back as x = D x̄, y = E ȳ / c.
    """

    P: torch.Tensor
    q: torch.Tensor
    A: Rows
    l: torch.Tensor
    u: torch.Tensor
    D: torch.Tensor  # (B, n)
    E: torch.Tensor  # (B, m)
    cost: torch.Tensor  # (B, 1)


def sanitize_and_scale(P, q, A, l, u, invalid: torch.Tensor, passes: int) -> Scaled:
    """Replace invalid problems by min ½‖x‖² (so they cannot poison the batch's arithmetic), then
    equilibrate [P Aᵀ; A 0] with `passes` Ruiz iterations and scale the cost (as OSQP does).

    A shared A stays shared: its rows are scaled alike in every problem and its columns not at all.
    """
    bad = invalid[:, None]
    batch, n, m = P.shape[0], P.shape[1], l.shape[1]
    eye = torch.eye(n, dtype=P.dtype, device=P.device)
    P = torch.where(bad[..., None], eye, 0.5 * (P + P.transpose(1, 2)))
    shared = Rows.of(A).shared
    A = torch.where(torch.isfinite(A[0]), A[0], 0.0) if shared else torch.where(bad[..., None], 0.0, A)
    q = torch.where(bad, 0.0, q)
    l = torch.where(bad, -float("inf"), l)
    u = torch.where(bad, float("inf"), u)
    D = torch.ones(batch, n, dtype=P.dtype, device=P.device)
    E = torch.ones(batch if not shared else 1, m, dtype=P.dtype, device=P.device)
    for _ in range(passes):
        e = _inv_sqrt_norm(A.abs().amax(-1))
        if shared:
            A, E = e[:, None] * A, E * e
            continue
        d = _inv_sqrt_norm(torch.maximum(P.abs().amax(1), A.abs().amax(1)))
        P = d[:, :, None] * P * d[:, None, :]
        A = e[:, :, None] * A * d[:, None, :]
        q = d * q
        D, E = D * d, E * e
    E = E.expand(batch, m)
    cost = torch.ones(batch, 1, dtype=P.dtype, device=P.device)
    if passes > 0:
        cost = _inv_norm(torch.maximum(P.abs().amax(1).mean(-1, keepdim=True), q.abs().amax(-1, keepdim=True)))
        P, q = cost[..., None] * P, cost * q
    rows = Rows(A.expand(batch, m, n) if shared else A, shared=shared)
    return Scaled(P=P, q=q, A=rows, l=E * l, u=E * u, D=D, E=E, cost=cost)


def _inv_norm(norm: torch.Tensor) -> torch.Tensor:
    """1/norm, with norms below 1e-4 left unscaled and above 1e4 capped (OSQP's limits)."""
    return 1.0 / torch.where(norm < 1e-4, 1.0, norm.clamp(max=1e4))


def _inv_sqrt_norm(norm: torch.Tensor) -> torch.Tensor:
    return torch.sqrt(_inv_norm(norm))
