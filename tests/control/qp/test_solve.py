"""Batched QP solver against proxsuite, on random QPs and on ground-reaction-force problems."""

from __future__ import annotations

import pytest
import torch

from canter.control.qp import QPStatus, kkt_residual, solve
from canter.core.errors import CanterError

from .conftest import FUSED, grf_batch, random_qps, reference


def _objective(P, q, x):
    return 0.5 * (x[:, None, :] @ P @ x[..., None])[:, 0, 0] + (q * x).sum(-1)


KERNELS = pytest.mark.parametrize("kernel", [FUSED, "torch"])


@KERNELS
@pytest.mark.parametrize(("n", "m"), [(3, 2), (6, 9), (12, 20), (20, 12)])
def test_random_strictly_convex_qps_match_reference(n, m, kernel):
    P, q, A, l, u = random_qps(24, n, m, seed=n * 100 + m)
    x, info = solve(P, q, A, l, u, kernel=kernel)
    x_ref, y_ref = reference(P, q, A, l, u)
    assert kkt_residual(P, q, A, l, u, torch.from_numpy(x_ref), torch.from_numpy(y_ref)).max() < 1e-6
    assert kkt_residual(P, q, A, l, u, x, info.y).max() <= 1e-5
    assert (info.status == QPStatus.SOLVED).all()
    # strictly convex: the minimizer is unique
    assert torch.allclose(x, torch.from_numpy(x_ref), atol=1e-5, rtol=0)


@KERNELS
def test_rank_deficient_qps_reach_reference_objective(kernel):
    P, q, A, l, u = random_qps(24, 8, 6, seed=7, strictly_convex=False)
    x, info = solve(P, q, A, l, u, iterations=30, kernel=kernel)
    x_ref, _ = reference(P, q, A, l, u)
    assert kkt_residual(P, q, A, l, u, x, info.y).max() <= 1e-5
    assert torch.allclose(_objective(P, q, x), _objective(P, q, torch.from_numpy(x_ref)), atol=1e-5, rtol=1e-7)


@KERNELS
@pytest.mark.parametrize("shared", [True, False])
def test_grf_problems_match_reference(shared, kernel):
    P, q, A, l, u = grf_batch(128, seed=1, shared=shared)
    assert (A.stride(0) == 0) == shared
    x, info = solve(P, q, A, l, u, kernel=kernel)
    x_ref, _ = reference(P, q, A, l, u)
    assert kkt_residual(P, q, A, l, u, x, info.y).max() <= 1e-5
    assert (info.status == QPStatus.SOLVED).all()
    assert (info.primal_residual <= 1e-5).all() and (info.dual_residual <= 1e-5).all()
    assert torch.allclose(x, torch.from_numpy(x_ref), atol=1e-4, rtol=0)  # newtons, P's condition ~1e5


@KERNELS
def test_batched_equals_per_problem(kernel):
    P, q, A, l, u = random_qps(11, 5, 7, seed=3)  # 11: a full group of 8 lanes and a short one
    x, info = solve(P, q, A, l, u, kernel=kernel)
    for i in range(11):
        xi, info_i = solve(P[i : i + 1], q[i : i + 1], A[i : i + 1], l[i : i + 1], u[i : i + 1], kernel=kernel)
        assert torch.allclose(xi[0], x[i], atol=1e-12, rtol=0)
        assert torch.allclose(info_i.y[0], info.y[i], atol=1e-10, rtol=0)
        assert info_i.status[0] == info.status[i]


def _infeasible_batch():
    """Problem 0 feasible, 1 primal infeasible (x₀ ≥ 1 and x₀ ≤ 0), 2 unbounded (min −x₀, x₀ ≥ 0)."""
    dt = torch.float64
    P = torch.eye(2, dtype=dt).repeat(3, 1, 1)
    q = torch.tensor([[1.0, -0.5], [0.0, 0.0], [-1.0, 0.0]], dtype=dt)
    A = torch.eye(2, dtype=dt).repeat(3, 1, 1)
    A[1] = torch.tensor([[1.0, 0.0], [1.0, 0.0]], dtype=dt)
    inf = float("inf")
    l = torch.tensor([[-1.0, -1.0], [1.0, -inf], [0.0, -1.0]], dtype=dt)
    u = torch.tensor([[1.0, 1.0], [inf, 0.0], [inf, 1.0]], dtype=dt)
    P[2] = 0.0
    return P, q, A, l, u


@pytest.mark.parametrize(("method", "kernel"), [pytest.param("ipm", "fused", marks=FUSED.marks), ("ipm", "torch"), ("admm", "auto")])
def test_infeasible_problems_are_flagged(method, kernel):
    x, info = solve(*_infeasible_batch(), method=method, kernel=kernel)
    assert info.status.tolist() == [QPStatus.SOLVED, QPStatus.PRIMAL_INFEASIBLE, QPStatus.DUAL_INFEASIBLE]
    assert torch.isfinite(x).all()
    assert torch.allclose(x[0], torch.tensor([-1.0, 0.5], dtype=torch.float64), atol=1e-6)


@KERNELS
def test_bad_inputs_are_flagged_without_touching_the_others(kernel):
    P, q, A, l, u = random_qps(6, 4, 5, seed=11)
    x_clean, _ = solve(P, q, A, l, u, kernel=kernel)
    P, q, A, l, u = P.clone(), q.clone(), A.clone(), l.clone(), u.clone()
    P[1, 0, 0] = float("nan")
    q[2, 1] = float("inf")
    l[3, 0], u[3, 0] = 1.0, -1.0  # l > u
    P[4] = -P[4]  # not convex
    x, info = solve(P, q, A, l, u, kernel=kernel)
    assert info.status[1:5].tolist() == [QPStatus.INVALID] * 4
    assert torch.isfinite(x).all() and (x[1:5] == 0).all() and torch.isfinite(info.y).all()
    for i in (0, 5):
        assert info.status[i] == QPStatus.SOLVED
        assert torch.allclose(x[i], x_clean[i], atol=1e-12, rtol=0)


@pytest.mark.parametrize(("method", "iterations", "kernel"), [pytest.param("ipm", 8, "fused", marks=FUSED.marks), ("ipm", 8, "torch"), ("admm", 40, "auto")])
def test_warm_start_reduces_the_residual(method, iterations, kernel):
    P, q, A, l, u = grf_batch(128, seed=5)
    x, info = solve(P, q, A, l, u, kernel=kernel)
    q_next = q * 1.01  # the next control step asks for a slightly different wrench
    _, cold = solve(P, q_next, A, l, u, method=method, iterations=iterations, kernel=kernel)
    _, warm = solve(P, q_next, A, l, u, x0=x, y0=info.y, method=method, iterations=iterations, kernel=kernel)
    cold_kkt = torch.maximum(cold.primal_residual, cold.dual_residual)
    warm_kkt = torch.maximum(warm.primal_residual, warm.dual_residual)
    assert warm_kkt.median() < 0.1 * cold_kkt.median()
    assert warm_kkt.max() < cold_kkt.max()


def test_admm_reaches_tolerance_on_random_qps():
    P, q, A, l, u = random_qps(16, 6, 8, seed=2)
    x, info = solve(P, q, A, l, u, method="admm", iterations=1000)
    assert kkt_residual(P, q, A, l, u, x, info.y).max() <= 1e-5


@KERNELS
def test_float32(kernel):
    P, q, A, l, u = grf_batch(64, seed=9)
    x64, _ = solve(P, q, A, l, u, kernel=kernel)
    P32, q32, A32, l32, u32 = (t.float() for t in (P, q, A, l, u))
    x32, info = solve(P32, q32, A32, l32, u32, eps_abs=1e-2, kernel=kernel)
    assert x32.dtype == torch.float32 and torch.isfinite(x32).all()
    assert (info.status == QPStatus.SOLVED).all()
    # P's condition number (~1e5) amplifies float32 round-off along its near-null space: compare
    # the objective (relative) and the KKT residual in float64 instead of single forces
    f32, f64 = _objective(P, q, x32.double()), _objective(P, q, x64)
    assert ((f32 - f64).abs() <= 1e-5 * f64.abs()).all()
    assert kkt_residual(P, q, A, l, u, x32.double(), info.y.double()).max() < 1e-1


def test_shape_and_option_errors_are_one_line():
    P, q, A, l, u = random_qps(2, 3, 2, seed=0)
    with pytest.raises(CanterError, match="q must be"):
        solve(P, q[:, :2], A, l, u)
    with pytest.raises(CanterError, match="method"):
        solve(P, q, A, l, u, method="simplex")  # type: ignore[arg-type]
    with pytest.raises(CanterError, match="float64"):
        solve(P, q.float(), A, l, u)
