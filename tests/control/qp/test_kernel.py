"""The fused CPU kernel against the torch path: the same iterates, the same statuses, and a clean
fallback when it cannot be built."""

from __future__ import annotations

import pytest
import torch

from canter.control.qp import QPStatus, kernel, solve
from canter.core.errors import CanterError

from .conftest import grf_batch, random_qps, requires_kernel


@requires_kernel
@pytest.mark.parametrize("iterations", [1, 3, 10])
@pytest.mark.parametrize("shared", [True, False])
def test_fused_iterates_equal_torch_iterates(iterations, shared):
    """After any fixed number of iterations both paths hold the same x and y (to round-off), on
    GRF problems with a shared or per-problem A; so the kernel runs the same algorithm."""
    P, q, A, l, u = grf_batch(37, seed=4, shared=shared)
    x_f, info_f = solve(P, q, A, l, u, iterations=iterations, kernel="fused")
    x_t, info_t = solve(P, q, A, l, u, iterations=iterations, kernel="torch")
    scale = x_t.abs().amax()
    assert (x_f - x_t).abs().max() <= 1e-9 * scale
    assert (info_f.y - info_t.y).abs().max() <= 1e-9 * info_t.y.abs().amax()
    assert torch.equal(info_f.status, info_t.status)
    assert torch.allclose(info_f.primal_residual, info_t.primal_residual, rtol=1e-6, atol=1e-9 * scale)


@requires_kernel
def test_fused_matches_torch_on_random_qps_with_warm_start():
    P, q, A, l, u = random_qps(19, 7, 9, seed=12)
    x, info = solve(P, q, A, l, u, iterations=6, kernel="torch")
    outs = [solve(P, q * 1.1, A, l, u, x0=x, y0=info.y, iterations=5, kernel=k) for k in ("fused", "torch")]
    (x_f, i_f), (x_t, i_t) = outs
    assert (x_f - x_t).abs().max() <= 1e-9 * (1 + x_t.abs().amax())
    assert torch.equal(i_f.status, i_t.status)


@requires_kernel
def test_fused_flags_every_kind_of_bad_problem_like_torch():
    P, q, A, l, u = random_qps(9, 4, 5, seed=21)
    P[1, 0, 0] = float("nan")
    A[2, 1, 1] = float("inf")
    l[3, 0], u[3, 0] = 1.0, -1.0
    P[4] = -P[4]
    P[5, 0, 1] += 1.0  # asymmetric
    l[6, 2] = float("inf")
    results = [solve(P, q, A, l, u, kernel=k) for k in ("fused", "torch")]
    assert results[0][1].status[1:7].tolist() == [QPStatus.INVALID] * 6
    assert torch.equal(results[0][1].status, results[1][1].status)
    assert torch.allclose(results[0][0], results[1][0], atol=1e-9, rtol=0)


@requires_kernel
def test_kernel_option_errors_and_fallback(monkeypatch, tmp_path):
    P, q, A, l, u = random_qps(3, 3, 2, seed=0)
    with pytest.raises(CanterError, match="kernel must be"):
        solve(P, q, A, l, u, kernel="gpu")  # type: ignore[arg-type]
    with pytest.raises(CanterError, match="kernel='fused' needs"):
        solve(P, q, A, l, u, method="admm", kernel="fused")
    # no compiler: a warning, then the torch path gives the same answer
    expected, _ = solve(P, q, A, l, u, kernel="torch")
    monkeypatch.setattr(kernel, "_libs", {})
    monkeypatch.setenv("CANTER_CACHE", str(tmp_path))
    monkeypatch.setenv("CC", str(tmp_path / "no-such-compiler"))
    with pytest.warns(RuntimeWarning, match="fused CPU kernel unavailable"):
        x, info = solve(P, q, A, l, u)
    assert torch.equal(x, expected) and (info.status == QPStatus.SOLVED).all()
    monkeypatch.setattr(kernel, "_libs", {})
    monkeypatch.setenv("CANTER_QP_KERNEL", "0")
    assert not kernel.available(P)
