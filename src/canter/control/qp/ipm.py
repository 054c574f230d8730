"""Batched primal-dual interior-point method (Mehrotra predictor-corrector) with a fixed budget.

Each row of l ≤ Ax ≤ u becomes up to two inequalities Cx + w = d, w ≥ 0 (C = [A; −A],
d = [u; −l]) with multipliers z ≥ 0; a row with l = u is kept as two inequalities a hair apart
(± `eq_gap`, relative), so one formula serves every row. One iteration:

    r_d = Px + q + Cᵀz,   r_p = Cx + w − d,   μ = wᵀz / #inequalities
    (P + Cᵀ diag(z/w) C + δI) Δx = −r_d − Cᵀ((z∘r_p − r_c)/w)          (one Cholesky, two solves)
    Δw = −r_p − CΔx,   Δz = (−r_c − z∘Δw)/w

first with r_c = w∘z (affine predictor), then with r_c = w∘z + Δw_aff∘Δz_aff − σμ,
σ = (μ_aff/μ)³ (Mehrotra), and a step 0.99 of the way to the boundary, per problem. Infinite
bounds are masked out. With a fixed budget some problems converge early; their later iterations
are round-off noise, so each problem keeps its best iterate by the merit max(‖r_d‖∞, ‖r_p‖∞, μ)
and stops moving once that is below 100 ε. Nothing here reads a tensor back to Python.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from canter.control.qp.problem import Rows, Scaled

TINY = 1e-30  # floor of slacks and multipliers (scaled units)
MAX_RATIO = 1e14  # cap of z/w: a strongly active row acts as a penalty of this weight
STEP_TO_BOUNDARY = 0.99
WARM_MULTIPLIER = 1e-2  # added to warm-start multipliers to keep them interior


@dataclass
class _Data:
    """The fixed part of the scaled problem in inequality form."""

    P: torch.Tensor  # (B, n, n)
    P_reg: torch.Tensor  # (B, n, n) P + δI, the base of every Newton matrix
    q: torch.Tensor  # (B, n)
    rows: Rows
    d: torch.Tensor  # (B, 2m)  [u; −l] with infinite entries zeroed
    mask: torch.Tensor  # (B, 2m)  1 where the bound is finite
    count: torch.Tensor  # (B, 1)   number of finite bounds (≥ 1)
    tol: float

    def C(self, v: torch.Tensor) -> torch.Tensor:
        Av = self.rows.mv(v)
        return torch.cat((Av, -Av), -1)

    def Ct(self, v: torch.Tensor) -> torch.Tensor:
        m = v.shape[-1] // 2
        return self.rows.rmv(v[:, :m] - v[:, m:])


def _max_step(v: torch.Tensor, dv: torch.Tensor) -> torch.Tensor:
    """(B, 1) largest α ≤ 1 with v + α dv ≥ 0 (v > 0)."""
    ratio = torch.where(dv < 0, v / (-dv).clamp(min=TINY), 1.0)
    return ratio.amin(-1, keepdim=True).clamp(max=1.0)


def _residuals(data: _Data, x, w, z):
    r_d = (data.P @ x[..., None])[..., 0] + data.q + data.Ct(z)
    r_p = (data.C(x) + w - data.d) * data.mask
    mu = (w * z).sum(-1, keepdim=True) / data.count
    merit = torch.maximum(torch.maximum(r_d.abs().amax(-1, keepdim=True), r_p.abs().amax(-1, keepdim=True)), mu)
    return r_d, r_p, mu, merit


def _direction(data: _Data, L, frozen, w, z, r_d, r_p, r_c):
    """Solve the reduced Newton system for the complementarity target r_c; returns Δx, Δw, Δz
    (Δx = 0 where `frozen`: there L may be a failed factorization)."""
    rhs = -r_d - data.Ct((z * r_p - r_c) / w * data.mask)
    dx = torch.where(frozen, 0.0, torch.cholesky_solve(rhs[..., None], L)[..., 0])
    dw = (-r_p - data.C(dx)) * data.mask
    return dx, dw, (-r_c - z * dw) / w * data.mask


def _step_to_boundary(w, z, dw, dz) -> torch.Tensor:
    """(B, 1) largest α ≤ 1 keeping w + α dw ≥ 0 and z + α dz ≥ 0."""
    return torch.minimum(_max_step(w, dw), _max_step(z, dz))


def ipm_step(data: _Data, state: tuple[torch.Tensor, ...]) -> tuple[torch.Tensor, ...]:
    """One Mehrotra iteration on every problem. state = (x, w, z, best_merit, best_x, best_z, dx);
    a pure tensor function, so torch.compile can wrap it."""
    x, w, z, best_merit, best_x, best_z, dx = state
    r_d, r_p, mu, merit = _residuals(data, x, w, z)
    better = merit < best_merit
    best_merit = torch.where(better, merit, best_merit)
    best_x, best_z = torch.where(better, x, best_x), torch.where(better, z, best_z)
    m = w.shape[-1] // 2
    ratio = (z / w).clamp(max=MAX_RATIO) * data.mask
    L, info = torch.linalg.cholesky_ex(data.rows.gram(data.P_reg, ratio[:, :m] + ratio[:, m:]))
    # a problem whose factorization failed, or that has converged, takes no step
    frozen = (info != 0)[:, None] | (merit <= data.tol)
    wz = w * z
    dx, dw, dz = _direction(data, L, frozen, w, z, r_d, r_p, wz)
    alpha = _step_to_boundary(w, z, dw, dz)
    mu_aff = ((w + alpha * dw) * (z + alpha * dz)).sum(-1, keepdim=True) / data.count
    sigma = (mu_aff / mu.clamp(min=TINY)).clamp(0.0, 1.0) ** 3
    dx, dw, dz = _direction(data, L, frozen, w, z, r_d, r_p, wz + dw * dz - sigma * mu * data.mask)
    alpha = torch.where(frozen, 0.0, STEP_TO_BOUNDARY * _step_to_boundary(w, z, dw, dz))
    dx, dw, dz = alpha * dx, alpha * dw, alpha * dz
    x = x + dx
    w = torch.where(data.mask > 0, (w + dw).clamp(min=TINY), 1.0)
    z = (z + dz).clamp(min=TINY) * data.mask
    return x, w, z, best_merit, best_x, best_z, dx


def ipm(
    s: Scaled,
    x: torch.Tensor,
    y: torch.Tensor | None,
    iterations: int,
    regularization: float,
    eq_gap: float,
    step: Callable = ipm_step,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Run `iterations` Mehrotra steps on the scaled problem `s` from x (B, n) and optional y (B, m).

    Returns x̄ (B, n), ȳ (B, m) (the best iterate of each problem) and the candidate certificate
    directions: the last step Δx̄ and the last multipliers ȳ. `step` may be a compiled `ipm_step`.
    (`kernel.solve` runs the same steps in the fused CPU kernel.)
    """
    gap = eq_gap * (1.0 + torch.maximum(s.l.abs(), s.u.abs()).nan_to_num(0.0, 0.0, 0.0))
    narrow = s.u - s.l < gap
    upper = torch.where(torch.isfinite(s.u), s.u, 0.0) + torch.where(narrow, gap, 0.0)
    lower = torch.where(torch.isfinite(s.l), s.l, 0.0) - torch.where(narrow, gap, 0.0)
    mask = torch.cat((torch.isfinite(s.u), torch.isfinite(s.l)), -1).to(x.dtype)
    eye = torch.eye(x.shape[1], dtype=x.dtype, device=x.device)
    data = _Data(
        P=s.P, P_reg=s.P + regularization * eye, q=s.q, rows=s.A, d=torch.cat((upper, -lower), -1), mask=mask,
        count=mask.sum(-1, keepdim=True).clamp(min=1.0), tol=100 * torch.finfo(x.dtype).eps,
    )
    w = torch.where(mask > 0, (data.d - data.C(x)).clamp(min=1.0), 1.0)
    if y is None:
        z = mask.clone()
    else:
        z = (torch.cat((y.clamp(min=0.0), (-y).clamp(min=0.0)), -1) + WARM_MULTIPLIER) * mask
    state = (x, w, z, torch.full_like(x[:, :1], float("inf")), x, z, torch.zeros_like(x))
    for _ in range(iterations):
        state = step(data, state)
    x, w, z, best_merit, best_x, best_z, dx = state
    merit = _residuals(data, x, w, z)[3]
    better = merit < best_merit
    m = s.l.shape[1]
    # certificates: an infeasible problem's multipliers grow along a Farkas direction, an
    # unbounded one's x along a recession direction; the last iterates show them best
    certificate_x, certificate_y = dx, z[:, :m] - z[:, m:]
    x, z = torch.where(better, x, best_x), torch.where(better, z, best_z)
    return x, z[:, :m] - z[:, m:], certificate_x, certificate_y
