"""Leg kinematics from the simulator's frames: Jacobians equal MuJoCo's mj_jac and finite
differences, foot velocities equal J q̇, and τ = Jᵀ F equals MuJoCo's own map of a foot force."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest
import torch

from canter.control.kinematics import bind_fields, forces_to_torques, quat_to_matrix, read_state
from canter.control.robot import Quadruped, QuadrupedCfg, motor_actuators
from canter.core.errors import ConfigError
from canter.sim.backend import make_simulator
from canter.sim.config import SimCfg
from canter.sim.model import asset_path, load_model

F64 = torch.float64
NUM_ENVS = 3


@pytest.fixture(scope="module")
def setup():
    model = load_model(asset_path("dog.xml"), (motor_actuators,), timestep=0.002)
    sim = make_simulator(model, NUM_ENVS, SimCfg(sensor_stage="current"), torch.device("cpu"))
    bind_fields(sim)
    sim.field("xmat")
    sim.set_default_keyframe(0)
    sim.reset()
    generator = torch.Generator().manual_seed(0)
    sim.qpos[:, 0:3] += 0.1 * torch.randn(NUM_ENVS, 3, generator=generator, dtype=F64)
    sim.qpos[:, 3:7] = torch.nn.functional.normalize(torch.randn(NUM_ENVS, 4, generator=generator, dtype=F64), dim=1)
    sim.qpos[:, 7:] += 0.3 * torch.randn(NUM_ENVS, 12, generator=generator, dtype=F64)
    sim.qvel[:] = torch.randn(NUM_ENVS, 18, generator=generator, dtype=F64)
    sim.forward()
    robot = Quadruped(model, QuadrupedCfg(), torch.device("cpu"), F64)
    return model, sim, robot


def test_motor_actuators_take_torques_within_the_old_force_limits():
    model = load_model(asset_path("dog.xml"), (motor_actuators,))
    np.testing.assert_array_equal(model.actuator_biastype, 0)
    np.testing.assert_array_equal(model.actuator_gainprm[:, 0], 1.0)
    np.testing.assert_array_equal(model.actuator_ctrlrange[:3], [[-23.7, 23.7], [-23.7, 23.7], [-35.55, 35.55]])


def test_robot_constants(setup):
    model, _, robot = setup
    assert robot.mass == pytest.approx(float(model.body_mass.sum()))
    torch.testing.assert_close(robot.inertia_b, robot.inertia_b.T)
    assert bool((torch.linalg.eigvalsh(robot.inertia_b) > 0).all())
    assert robot.ctrl_slice == slice(0, 12)
    torch.testing.assert_close(robot.shoulder_offset_b[0], torch.tensor([0.1881, -0.12675, 0.0], dtype=F64))


def test_jacobians_and_foot_velocities_equal_mujoco(setup):
    model, sim, robot = setup
    state = read_state(sim, robot)
    for leg in range(4):
        body = np.full(NUM_ENVS, model.site_bodyid[int(robot.foot_site_ids[leg])])
        jacp, _ = sim.batch.jac(body, state.foot_pos[:, leg].numpy())
        np.testing.assert_allclose(state.jacobian[:, leg].numpy(), jacp[:, :, robot.dof_adr[leg].numpy()], atol=1e-12)
        velocity = np.einsum("bij,bj->bi", jacp, sim.qvel.numpy())
        np.testing.assert_allclose(state.foot_vel[:, leg].numpy(), velocity, atol=1e-12)


def test_jacobian_matches_finite_differences_of_the_foot_position(setup):
    model, sim, robot = setup
    data = mujoco.MjData(model)
    data.qpos[:] = sim.qpos[0].numpy()
    mujoco.mj_kinematics(model, data)
    state = read_state(sim, robot)
    site = int(robot.foot_site_ids[2])
    h = 1e-6
    for k, adr in enumerate(robot.qpos_adr[2].tolist()):
        data.qpos[adr] += h
        mujoco.mj_kinematics(model, data)
        plus = data.site_xpos[site].copy()
        data.qpos[adr] -= 2 * h
        mujoco.mj_kinematics(model, data)
        minus = data.site_xpos[site].copy()
        data.qpos[adr] += h
        np.testing.assert_allclose(state.jacobian[0, 2, :, k].numpy(), (plus - minus) / (2 * h), atol=1e-8)


def test_transposed_jacobian_maps_a_foot_force_like_mujoco(setup):
    model, sim, robot = setup
    state = read_state(sim, robot)
    force = torch.tensor([[10.0, -4.0, 60.0], [0.0, 3.0, 45.0], [-7.0, 0.0, 30.0], [1.0, 1.0, 1.0]], dtype=F64)
    torques = forces_to_torques(state.jacobian, force.expand(NUM_ENVS, 4, 3))
    data = mujoco.MjData(model)
    for env in range(NUM_ENVS):
        data.qpos[:] = sim.qpos[env].numpy()
        mujoco.mj_kinematics(model, data)
        mujoco.mj_comPos(model, data)
        for leg in range(4):
            qfrc = np.zeros(model.nv)
            body = int(model.site_bodyid[int(robot.foot_site_ids[leg])])
            point = state.foot_pos[env, leg].numpy()
            mujoco.mj_applyFT(model, data, force[leg].numpy(), np.zeros(3), point, body, qfrc)
            np.testing.assert_allclose(torques[env, leg].numpy(), qfrc[robot.dof_adr[leg].numpy()], atol=1e-10)


def test_quaternion_matrix_rotates_like_mujoco(setup):
    _, sim, robot = setup
    rot = quat_to_matrix(sim.qpos[:, 3:7])
    xmat = sim.field("xmat")[:, robot.trunk_id].reshape(NUM_ENVS, 3, 3)
    torch.testing.assert_close(rot, xmat)


def test_a_model_without_the_named_feet_is_refused(setup):
    model, _, _ = setup
    with pytest.raises(ConfigError, match="no site named 'FR_toe'"):
        Quadruped(model, QuadrupedCfg(foot_site="{leg}_toe"), torch.device("cpu"), F64)
