"""What `solve` reports per problem: a status code, residuals and the duals for warm starts."""

from __future__ import annotations

import enum
from dataclasses import dataclass

import torch


class QPStatus(enum.IntEnum):
    """Per-problem outcome, stored as int64 in `QPInfo.status`."""

    SOLVED = 0  # primal and dual residuals within tolerance
    MAX_ITER = 1  # the fixed iteration budget ran out first: x is an inaccurate (but finite) estimate
    PRIMAL_INFEASIBLE = 2  # a certificate shows that no x satisfies l ≤ Ax ≤ u
    DUAL_INFEASIBLE = 3  # a certificate shows the objective is unbounded below
    INVALID = 4  # non-finite data, l > u, or a non-convex P; x is zero


@dataclass(frozen=True)
class QPInfo:
    """Per-problem results of a batched solve; every tensor has the batch as its first dimension.

    Attributes:
        status: (B,) int64 `QPStatus` codes.
        primal_residual: (B,) ‖Ax − Π_[l,u](Ax)‖∞, the constraint violation of x.
        dual_residual: (B,) ‖Px + q + Aᵀy‖∞, the stationarity error of (x, y).
        y: (B, m) constraint multipliers (yᵢ > 0 where the upper bound is active, < 0 at the lower),
            to pass back as `y0` for a warm start.
        iterations: the iteration count every problem ran (fixed, not data dependent).
    """

    status: torch.Tensor
    primal_residual: torch.Tensor
    dual_residual: torch.Tensor
    y: torch.Tensor
    iterations: int

    @property
    def solved(self) -> torch.Tensor:
        """(B,) bool: status is SOLVED."""
        return self.status == QPStatus.SOLVED
