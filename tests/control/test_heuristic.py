"""The heuristic controller: Raibert footholds and CoM feedback by their formulas, and, driving the
low-level controller (GRF QP + swing legs) on the dog in torque mode, a trot on flat ground that
neither falls nor stalls."""

from __future__ import annotations

import pytest
import torch

from canter.control.controller import LowLevelCfg, LowLevelController
from canter.control.gait import GaitCfg, GaitScheduler
from canter.control.heuristic import HeuristicCfg, body_feedback, heuristic_targets, raibert_footholds
from canter.control.kinematics import RobotState, bind_fields, read_state
from canter.control.robot import Quadruped, QuadrupedCfg, motor_actuators
from canter.core.device import torch_threads
from canter.sim.backend import make_simulator
from canter.sim.config import SimCfg
from canter.sim.model import asset_path, load_model

F64 = torch.float64
CPU = torch.device("cpu")


@pytest.fixture(autouse=True)
def _one_torch_thread():
    """The controller's small tensor ops run between physics calls, as in a rollout: on one torch
    thread (OpenMP workers spinning next to MuJoCo's threads slow everything down many times)."""
    with torch_threads(1):
        yield


def _flat(xy: torch.Tensor) -> torch.Tensor:
    return torch.zeros(xy.shape[:-1], dtype=xy.dtype)


def _state(root_pos, com_vel, quat=(1.0, 0.0, 0.0, 0.0), ang_vel=(0.0, 0.0, 0.0)) -> RobotState:
    zeros = torch.zeros(1, 3, dtype=F64)
    feet = torch.zeros(1, 4, 3, dtype=F64)
    return RobotState(
        root_pos=torch.tensor([root_pos], dtype=F64), quat=torch.tensor([quat], dtype=F64), rot=torch.eye(3, dtype=F64)[None],
        root_lin_vel=torch.tensor([com_vel], dtype=F64), ang_vel=torch.tensor([ang_vel], dtype=F64), com=zeros,
        com_vel=torch.tensor([com_vel], dtype=F64), foot_pos=feet, foot_vel=feet, jacobian=torch.zeros(1, 4, 3, 3, dtype=F64),
        shoulder_pos=feet, joint_vel=feet,
    )


def _model():
    return load_model(asset_path("dog.xml"), (motor_actuators,), timestep=0.002)


def test_raibert_footholds_by_the_formula():
    robot = Quadruped(_model(), QuadrupedCfg(), CPU, F64)
    gait = GaitScheduler(GaitCfg(frequency=2.0, duty_factor=0.5), 1, CPU, F64)
    gait.advance(0.125)  # φ = 0.25: FL and RR are half-way through their swing (s = 0.5)
    state = _state((1.0, 2.0, 0.28), (0.4, 0.0, 0.0))
    cfg = HeuristicCfg(raibert_gain=0.1, max_correction=0.15)
    xy = raibert_footholds(state, gait, robot, torch.tensor([[0.6, 0.0]], dtype=F64), cfg)
    # swing 0.25 s, stance 0.25 s: FL lands in 0.125 s; x = 1 + 0.1881 + 0.4 (0.125 + 0.125) + 0.1 (0.4 - 0.6)
    assert abs(float(xy[0, 1, 0]) - (1.0 + 0.1881 + 0.1 - 0.02)) < 1e-12
    assert abs(float(xy[0, 1, 1]) - (2.0 + 0.12675)) < 1e-12
    # a stance leg (s = 0) is planned a full swing ahead
    assert abs(float(xy[0, 0, 0]) - (1.0 + 0.1881 + 0.4 * (0.25 + 0.125) - 0.02)) < 1e-12


def test_body_feedback_by_the_formula():
    cfg = HeuristicCfg(height=0.3, kp_height=100.0, kd_height=10.0, kv=2.0, kp_rot=(50.0, 50.0, 20.0), kd_rot=(5.0, 5.0, 2.0))
    # yawed by 0.2 rad about z, ω = (0.1, 0, 0)
    half = 0.1
    state = _state((0.0, 0.0, 0.25), (0.2, 0.0, 0.1), quat=(torch.cos(torch.tensor(half)).item(), 0.0, 0.0,
                   torch.sin(torch.tensor(half)).item()), ang_vel=(0.1, 0.0, 0.0))
    acc_lin, acc_ang = body_feedback(state, torch.tensor([[0.5, 0.0]], dtype=F64), torch.tensor([0.0], dtype=F64),
                                     torch.tensor([0.0], dtype=F64), torch.tensor([0.02], dtype=F64), cfg)
    torch.testing.assert_close(acc_lin[0], torch.tensor([2.0 * 0.3, 0.0, 100.0 * 0.07 - 10.0 * 0.1], dtype=F64))
    # heading error -0.2 rad about z (small-angle vector 2 sin(-0.1)), damping on ω_x
    expected = torch.tensor([-5.0 * 0.1, 0.0, 20.0 * 2.0 * float(torch.sin(torch.tensor(-half)))], dtype=F64)
    torch.testing.assert_close(acc_ang[0], expected)


def test_heuristic_trots_forward_on_flat_ground_without_falling():
    num_envs, dt = 3, 0.004
    model = _model()
    sim = make_simulator(model, num_envs, SimCfg(sensor_stage="current"), CPU)
    bind_fields(sim)
    sim.set_default_keyframe(0)
    sim.reset()
    sim.forward()
    robot = Quadruped(model, QuadrupedCfg(), CPU, F64)
    controller = LowLevelController(LowLevelCfg(), robot, num_envs, CPU, F64)
    controller.reset(torch.arange(num_envs), read_state(sim, robot).foot_pos)
    command = torch.tensor([[0.0, 0.0, 0.0], [0.4, 0.0, 0.0], [0.0, 0.2, 0.0]], dtype=F64)
    heading = torch.zeros(num_envs, dtype=F64)
    lowest = torch.full((num_envs,), 1.0, dtype=F64)
    for _ in range(round(1.6 / dt)):  # 1.6 s: four gait cycles
        state = read_state(sim, robot)
        targets = heuristic_targets(state, controller.gait, robot, command, heading, _flat, HeuristicCfg())
        torque = controller.compute(state, targets, dt, sim.field("qfrc_bias")[:, robot.dof_adr])
        sim.ctrl[:, :12] = torque.reshape(num_envs, 12)
        sim.step(2)
        lowest = torch.minimum(lowest, sim.qpos[:, 2])
    assert int(sim.nonfinite_total) == 0
    assert bool((lowest > 0.22).all())  # the trunk stays up (standing height 0.28)
    assert float(read_state(sim, robot).rot[:, 2, 2].min()) > 0.98  # and level (< 11° tilt)
    x, y = sim.qpos[:, 0], sim.qpos[:, 1]
    assert abs(float(x[0])) < 0.15 and abs(float(y[0])) < 0.15  # trotting in place stays put
    assert float(x[1]) > 0.3  # forward at 0.4 m/s: at least half of the 0.64 m commanded
    assert float(y[2]) > 0.12 and abs(float(x[2])) < 0.15  # sideways at 0.2 m/s
