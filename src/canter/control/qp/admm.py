"""Batched ADMM (the OSQP iteration) on a scaled batch, with a fixed budget and a fixed schedule of
per-problem step-size (ρ) updates, each followed by a refactorization:

    x̃ = (P + σI + Aᵀ diag(ρ) A)⁻¹ (σx − q + Aᵀ(ρ∘z − y))
    x ← αx̃ + (1 − α)x,   ẑ = αAx̃ + (1 − α)z
    z ← Π_[l,u](ẑ + y/ρ),   y ← y + ρ∘(ẑ − z)

ρ is 10³ larger on equality rows and 10⁻⁶ on free rows (OSQP's choice); an update sets
ρ ← ρ·sqrt((‖r_prim‖/scale_prim) / (‖r_dual‖/scale_dual)).
"""

from __future__ import annotations

import torch

from canter.control.qp.problem import Scaled

RHO_MIN, RHO_MAX = 1e-6, 1e6
RHO_EQ_FACTOR = 1e3


def admm(
    s: Scaled,
    x: torch.Tensor,
    y: torch.Tensor | None,
    iterations: int,
    rho: float,
    sigma: float,
    alpha: float,
    rho_updates: tuple[int, ...],
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Run `iterations` ADMM steps on the scaled problem `s`; returns x̄, ȳ and the last steps Δx̄, Δȳ."""
    batch, n = x.shape
    eye = torch.eye(n, dtype=x.dtype, device=x.device)
    z = torch.minimum(torch.maximum(s.A.mv(x), s.l), s.u)
    y = torch.zeros_like(s.l) if y is None else y
    equality = torch.isfinite(s.l) & ((s.u - s.l).abs() < 1e-4)
    free = torch.isinf(s.l) & torch.isinf(s.u)
    rho_bar = torch.full((batch, 1), rho, dtype=x.dtype, device=x.device)

    def factor(rho_bar: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        rho_vec = torch.where(equality, rho_bar * RHO_EQ_FACTOR, rho_bar)
        rho_vec = torch.where(free, RHO_MIN, rho_vec)
        L, info = torch.linalg.cholesky_ex(s.A.gram(s.P + sigma * eye, rho_vec))
        return torch.cholesky_inverse(torch.where((info == 0)[:, None, None], L, eye)), rho_vec

    K_inv, rho_vec = factor(rho_bar)
    dx, dy = torch.zeros_like(x), torch.zeros_like(y)
    for k in range(iterations):
        if k in rho_updates:
            rho_bar = _adapt_rho(s, x, z, y, rho_bar)
            K_inv, rho_vec = factor(rho_bar)
        x_tilde = (K_inv @ (sigma * x - s.q + s.A.rmv(rho_vec * z - y))[..., None])[..., 0]
        z_relaxed = alpha * s.A.mv(x_tilde) + (1 - alpha) * z
        dx = alpha * (x_tilde - x)
        x = x + dx
        z = torch.minimum(torch.maximum(z_relaxed + y / rho_vec, s.l), s.u)
        dy = rho_vec * (z_relaxed - z)
        y = y + dy
    return x, y, dx, dy


def _adapt_rho(s: Scaled, x, z, y, rho_bar):
    Ax, Px, Aty = s.A.mv(x), (s.P @ x[..., None])[..., 0], s.A.rmv(y)
    tiny = torch.finfo(x.dtype).tiny ** 0.5
    prim = (Ax - z).abs().amax(-1, keepdim=True)
    dual = (Px + s.q + Aty).abs().amax(-1, keepdim=True)
    prim_scale = torch.maximum(Ax.abs().amax(-1, keepdim=True), z.abs().amax(-1, keepdim=True))
    dual_scale = torch.stack((Px.abs().amax(-1), Aty.abs().amax(-1), s.q.abs().amax(-1))).amax(0)[:, None]
    ratio = (prim / (prim_scale + tiny)) / (dual / (dual_scale + tiny) + tiny)
    new = rho_bar * torch.sqrt(ratio)
    return torch.where(torch.isfinite(new), new, rho_bar).clamp(RHO_MIN, RHO_MAX)
