"""Swing trajectory: hits lift-off, apex and target, leaves and lands at rest, derivative right."""

from __future__ import annotations

import pytest
import torch

from canter.control.swing import cartesian_pd, swing_trajectory

F64 = torch.float64
START = torch.tensor([[0.10, -0.13, 0.02], [0.0, 0.0, 0.05]], dtype=F64)
TARGET = torch.tensor([[0.30, -0.10, 0.02], [-0.2, 0.1, 0.0]], dtype=F64)
APEX = 0.07


def _at(s: float) -> tuple[torch.Tensor, torch.Tensor]:
    return swing_trajectory(START, TARGET, APEX, torch.full((2,), s, dtype=F64))


def test_hits_lift_off_apex_and_target():
    p0, v0 = _at(0.0)
    p1, v1 = _at(1.0)
    mid, _ = _at(0.5)
    torch.testing.assert_close(p0, START, rtol=0, atol=1e-15)
    torch.testing.assert_close(p1, TARGET, rtol=0, atol=1e-15)
    torch.testing.assert_close(v0, torch.zeros_like(v0))
    torch.testing.assert_close(v1, torch.zeros_like(v1))
    # midway in xy, `apex` above the higher end point
    torch.testing.assert_close(mid[:, 0:2], 0.5 * (START[:, 0:2] + TARGET[:, 0:2]))
    torch.testing.assert_close(mid[:, 2], torch.maximum(START[:, 2], TARGET[:, 2]) + APEX)


def test_apex_is_the_highest_point_and_the_foot_lifts_before_moving():
    s = torch.linspace(0.0, 1.0, 201, dtype=F64)
    p, _ = swing_trajectory(START[:1].expand(201, 3), TARGET[:1].expand(201, 3), APEX, s)
    assert int(p[:, 2].argmax()) == 100
    early = s <= 0.1  # within the margin the foot only rises
    torch.testing.assert_close(p[early, 0], START[0, 0].expand(int(early.sum())))
    # equal end heights: z(0.1) = z0 + apex * 16 * 0.1² * 0.9² = z0 + 0.07 * 0.1296 (9 mm up)
    assert float(p[20, 2]) == pytest.approx(float(START[0, 2]) + APEX * 0.1296, abs=1e-12)


def test_derivative_matches_finite_differences():
    s = torch.tensor([0.05, 0.23, 0.5, 0.71, 0.97], dtype=F64)
    start, target = START[:1].expand(5, 3), TARGET[:1].expand(5, 3)
    _, d_ds = swing_trajectory(start, target, APEX, s)
    h = 1e-6
    plus, _ = swing_trajectory(start, target, APEX, s + h)
    minus, _ = swing_trajectory(start, target, APEX, s - h)
    torch.testing.assert_close(d_ds, (plus - minus) / (2 * h), rtol=1e-5, atol=1e-7)


def test_cartesian_pd():
    force = cartesian_pd(
        torch.tensor([0.0, 0.0, 0.1], dtype=F64), torch.tensor([1.0, 0.0, 0.0], dtype=F64),
        torch.tensor([0.1, 0.0, 0.1], dtype=F64), torch.tensor([0.0, 0.0, 2.0], dtype=F64),
        torch.tensor([100.0, 100.0, 200.0], dtype=F64), torch.tensor([10.0, 10.0, 5.0], dtype=F64),
    )
    torch.testing.assert_close(force, torch.tensor([100 * 0.1 - 10 * 1.0, 0.0, 5.0 * 2.0], dtype=F64))
