"""Batched dense convex QP solver (torch, any device) and the quadruped ground-reaction-force QP.

`solve(P, q, A, l, u, ...) -> (x, QPInfo)` solves min ½xᵀPx + qᵀx s.t. l ≤ Ax ≤ u for a batch;
`grf_problem(...)` builds the 12-variable contact-force problem of a quadruped for it.
"""

from canter.control.qp.grf import grf_problem
from canter.control.qp.info import QPInfo, QPStatus
from canter.control.qp.residuals import dual_residual, kkt_residual, primal_residual
from canter.control.qp.solve import solve

__all__ = ["QPInfo", "QPStatus", "dual_residual", "grf_problem", "kkt_residual", "primal_residual", "solve"]
