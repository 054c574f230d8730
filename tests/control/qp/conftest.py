"""Random QP batches and an independent reference solver (proxsuite, a test-only dependency)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from canter.control.qp import grf_problem, kernel

proxsuite = pytest.importorskip("proxsuite")

# the fused CPU kernel needs a C compiler; without one `solve` runs the torch path
requires_kernel = pytest.mark.skipif(
    not kernel.available(torch.zeros(1, dtype=torch.float64)), reason="no C compiler: the fused QP kernel cannot be built"
)
FUSED = pytest.param("fused", marks=requires_kernel)


def random_qps(batch: int, n: int, m: int, seed: int, *, strictly_convex: bool = True, dtype=torch.float64):
    """Feasible random QPs: min(m/3, n/2) equality rows, the others two-sided or one-sided at
    random; bounds built around a random feasible point."""
    g = torch.Generator().manual_seed(seed)
    M = torch.randn(batch, n, n, generator=g, dtype=dtype)
    P = M @ M.transpose(1, 2) / n
    if strictly_convex:
        P = P + 0.1 * torch.eye(n, dtype=dtype)
    else:  # rank-deficient P: the constraints must bound the problem
        P = P * (torch.arange(n) < n // 2).to(dtype)[:, None] * (torch.arange(n) < n // 2).to(dtype)
    q = torch.randn(batch, n, generator=g, dtype=dtype)
    A = torch.randn(batch, m, n, generator=g, dtype=dtype)
    x_feasible = torch.randn(batch, n, generator=g, dtype=dtype)
    Ax = (A @ x_feasible[..., None])[..., 0]
    kind = torch.randint(1, 4, (batch, m), generator=g)
    kind[:, : min(m // 3, n // 2)] = 0
    width = torch.rand(batch, m, generator=g, dtype=dtype) + 0.1
    inf = torch.full_like(Ax, float("inf"))
    l = torch.where(kind == 0, Ax, torch.where(kind == 3, -inf, Ax - width))
    u = torch.where(kind == 0, Ax, torch.where(kind == 2, inf, Ax + width))
    if not strictly_convex:  # a box on every variable keeps the objective bounded
        A = torch.cat((A, torch.eye(n, dtype=dtype).expand(batch, n, n)), 1)
        l = torch.cat((l, x_feasible - 2.0), 1)
        u = torch.cat((u, x_feasible + 2.0), 1)
    return P, q, A, l, u


def grf_batch(batch: int, seed: int, dtype=torch.float64, shared: bool = True):
    """GRF problems of random stances: feet around a 0.38 × 0.22 m stance at 0.3 m height, a
    random contact pattern with ≥ 2 feet down, a 12 kg body accelerating randomly."""
    g = torch.Generator().manual_seed(seed)
    nominal = torch.tensor([[0.19, 0.11, -0.3], [0.19, -0.11, -0.3], [-0.19, 0.11, -0.3], [-0.19, -0.11, -0.3]], dtype=dtype)
    feet = nominal + 0.05 * (2 * torch.rand(batch, 4, 3, generator=g, dtype=dtype) - 1)
    patterns = torch.tensor([[1, 1, 1, 1], [1, 0, 0, 1], [0, 1, 1, 0], [1, 1, 1, 0], [0, 1, 1, 1]], dtype=torch.bool)
    contact = patterns[torch.randint(0, len(patterns), (batch,), generator=g)]
    acc = torch.randn(batch, 3, generator=g, dtype=dtype) * torch.tensor([1.0, 1.0, 2.0], dtype=dtype)
    force = 12.0 * (acc + torch.tensor([0.0, 0.0, 9.81], dtype=dtype))
    torque = 2.0 * torch.randn(batch, 3, generator=g, dtype=dtype)
    mu = 0.6 if shared else torch.full((batch,), 0.6, dtype=dtype)
    return grf_problem(feet, contact, torch.cat((force, torque), -1), mu=mu, fz_max=150.0)


def reference(P, q, A, l, u) -> tuple[np.ndarray, np.ndarray]:
    """proxsuite's dense solver, one problem at a time, at 1e-10: x (B, n), y (B, m)."""
    xs, ys = [], []
    for i in range(P.shape[0]):
        qp = proxsuite.proxqp.dense.QP(P.shape[1], 0, A.shape[1])
        qp.settings.eps_abs = 1e-10
        qp.settings.eps_rel = 0.0
        qp.init(P[i].numpy(), q[i].numpy(), None, None, A[i].contiguous().numpy(), l[i].numpy(), u[i].numpy())
        qp.solve()
        xs.append(qp.results.x.copy())
        ys.append(qp.results.z.copy())
    return np.stack(xs), np.stack(ys)
