"""Residuals of the optimality conditions of ½xᵀPx + qᵀx s.t. l ≤ Ax ≤ u, for any solver's output."""

from __future__ import annotations

import torch


def _matvec(M: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    return (M @ v[..., None])[..., 0]


def primal_residual(A: torch.Tensor, l: torch.Tensor, u: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """(B,) ‖Ax − Π_[l,u](Ax)‖∞: how far Ax lies outside the bounds."""
    Ax = _matvec(A, x)
    return (Ax - torch.minimum(torch.maximum(Ax, l), u)).abs().amax(-1)


def dual_residual(
    P: torch.Tensor, q: torch.Tensor, A: torch.Tensor, x: torch.Tensor, y: torch.Tensor
) -> torch.Tensor:
    """(B,) ‖Px + q + Aᵀy‖∞: the stationarity error of the Lagrangian."""
    return (_matvec(P, x) + q + _matvec(A.transpose(-1, -2), y)).abs().amax(-1)


def kkt_residual(
    P: torch.Tensor,
    q: torch.Tensor,
    A: torch.Tensor,
    l: torch.Tensor,
    u: torch.Tensor,
    x: torch.Tensor,
    y: torch.Tensor,
) -> torch.Tensor:
    """(B,) max(‖Px + q + Aᵀy‖∞, ‖Ax − Π_[l,u](Ax + y)‖∞).

    The second term is the natural residual of the constraints and complementarity together: it is
    zero exactly when l ≤ Ax ≤ u and y lies in the normal cone of [l, u] at Ax (yᵢ ≥ 0 only where
    (Ax)ᵢ = uᵢ, yᵢ ≤ 0 only where (Ax)ᵢ = lᵢ); otherwise it measures min(|multiplier|, slack) of the
    worst row, or its violation. All three parts are in the problem's own units.
    """
    Ax = _matvec(A, x)
    natural = (Ax - torch.minimum(torch.maximum(Ax + y, l), u)).abs().amax(-1)
    return torch.maximum(dual_residual(P, q, A, x, y), natural)
