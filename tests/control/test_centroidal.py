"""Centroidal body controller: the desired wrench of single-rigid-body dynamics, and the QP forces
reproduce it when it is feasible, respect friction and normal bounds, and vanish on swing feet."""

from __future__ import annotations

import math

import pytest
import torch

from canter.control.centroidal import (
    GRAVITY,
    BodyController,
    BodyControllerCfg,
    desired_wrench,
    world_inertia,
    wrench_of_forces,
)
from canter.core.device import torch_threads
from canter.core.errors import ConfigError

F64 = torch.float64
FEET = torch.tensor([[0.19, -0.13, -0.28], [0.19, 0.13, -0.28], [-0.19, -0.13, -0.28], [-0.19, 0.13, -0.28]], dtype=F64)


@pytest.fixture(autouse=True)
def _one_torch_thread():
    """Small batched solves: one torch thread (spinning OpenMP workers only slow them down)."""
    with torch_threads(1):
        yield


def test_desired_wrench_is_mass_times_acceleration_plus_gravity_and_euler():
    inertia = torch.diag(torch.tensor([0.1, 0.4, 0.4], dtype=F64))[None]
    acc_lin = torch.tensor([[0.5, 0.0, -1.0]], dtype=F64)
    acc_ang = torch.tensor([[1.0, 2.0, 0.0]], dtype=F64)
    omega = torch.tensor([[0.0, 0.0, 3.0]], dtype=F64)
    wrench = desired_wrench(12.0, inertia, acc_lin, acc_ang, omega)
    # torque = I α + ω × I ω; ω ∥ z and I diagonal: I ω ∥ z, so the cross product vanishes
    torch.testing.assert_close(wrench[0], torch.tensor([6.0, 0.0, 12.0 * (GRAVITY - 1.0), 0.1, 0.8, 0.0], dtype=F64))
    rot = torch.tensor([[[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]], dtype=F64)  # yaw 90°
    torch.testing.assert_close(world_inertia(rot, inertia[0])[0], torch.diag(torch.tensor([0.4, 0.1, 0.4], dtype=F64)))


def _solve(stance: torch.Tensor, wrench: torch.Tensor, **cfg) -> tuple[torch.Tensor, BodyController]:
    controller = BodyController(BodyControllerCfg(qp_iterations=cfg.pop("iterations", 40), **cfg), wrench.shape[0],
                                torch.device("cpu"), F64)
    forces = controller.solve(FEET.expand(wrench.shape[0], 4, 3), stance, wrench)
    return forces, controller


def test_feasible_wrenches_are_reproduced_by_the_forces():
    mass = 12.7
    wrench = torch.tensor([
        [0.0, 0.0, mass * GRAVITY, 0.0, 0.0, 0.0],
        [10.0, -5.0, mass * (GRAVITY + 1.0), 1.0, -2.0, 0.5],
        [-8.0, 4.0, mass * (GRAVITY - 2.0), -1.5, 1.0, -0.8],
    ], dtype=F64)
    stance = torch.ones(3, 4, dtype=torch.bool)
    forces, controller = _solve(stance, wrench, force_reg=1e-8)
    assert bool(controller.last_info is not None and controller.last_info.solved.all())
    torch.testing.assert_close(wrench_of_forces(FEET.expand(3, 4, 3), forces), wrench, atol=2e-3, rtol=0)


def test_forces_respect_the_friction_pyramid_normal_bounds_and_swing_feet():
    wrench = torch.tensor([[60.0, 0.0, 120.0, 0.0, 0.0, 0.0], [0.0, 0.0, 120.0, 0.0, 0.0, 0.0]], dtype=F64)
    stance = torch.tensor([[True, False, False, True], [False, True, True, False]])
    forces, _ = _solve(stance, wrench, mu=0.4, fz_min=5.0, fz_max=50.0)
    assert bool((forces[~stance] == 0).all())
    fz = forces[..., 2][stance]
    assert bool((fz >= 5.0 - 1e-4).all() and (fz <= 50.0 + 1e-4).all())
    tangential = forces[..., 0:2][stance].abs()
    assert bool((tangential <= 0.4 * fz[:, None] + 1e-4).all())
    # 120 N up but at most 2 x 50 N: the normal bound binds; the 60 N push is cut to what friction
    # (at most 0.4 x 100 N) and the torque it makes about the CoM allow
    torch.testing.assert_close(fz.reshape(2, 2).sum(dim=1), torch.tensor([100.0, 100.0], dtype=F64), atol=1e-3, rtol=0)
    assert 20.0 < float(forces[0, :, 0].sum()) <= 40.0 + 1e-3


def test_static_split_shares_the_force_over_stance_feet_without_a_solve():
    wrench = torch.tensor([[6.0, 0.0, 120.0, 1.0, 0.0, 0.0]], dtype=F64)
    stance = torch.tensor([[True, True, False, True]])
    forces, controller = _solve(stance, wrench, solver="static")
    assert controller.last_info is None
    torch.testing.assert_close(forces[0, 0], torch.tensor([2.0, 0.0, 40.0], dtype=F64))
    assert bool((forces[0, 2] == 0).all())


def test_warm_start_state_and_reset():
    wrench = torch.tensor([[0.0, 0.0, 100.0, 0.0, 0.0, 0.0]] * 2, dtype=F64)
    _, controller = _solve(torch.ones(2, 4, dtype=torch.bool), wrench)
    assert bool((controller.forces[..., 2] > 0).all()) and controller.duals.shape == (2, 20)
    controller.reset(torch.tensor([0]))
    assert bool((controller.forces[0] == 0).all()) and bool((controller.forces[1, :, 2] > 0).all())
    assert math.isclose(float(controller.forces[1, :, 2].sum()), 100.0, rel_tol=1e-3)


def test_bad_config_names_the_field():
    with pytest.raises(ConfigError, match=r"body\.fz_min"):
        BodyControllerCfg(fz_min=10.0, fz_max=5.0)
