"""The low-level controller on the warp backend (MuJoCo Warp on Warp's CPU device): the frames it
reads give the cpu backend's Jacobians and foot velocities, and a few controller ticks from the same
state give the same torques and motion within float32 tolerance."""

from __future__ import annotations

import pytest

pytest.importorskip("warp")
pytest.importorskip("mujoco_warp")

import torch

from canter.control.controller import LowLevelCfg, LowLevelController
from canter.control.heuristic import HeuristicCfg, heuristic_targets
from canter.control.kinematics import bind_fields, read_state
from canter.control.robot import Quadruped, QuadrupedCfg, motor_actuators
from canter.core.device import torch_threads
from canter.sim.backend import make_simulator
from canter.sim.config import SimCfg
from canter.sim.model import asset_path, load_model

CPU = torch.device("cpu")
NUM_ENVS = 2


@pytest.fixture(autouse=True)
def _one_torch_thread():
    """The controller's small tensor ops run between physics calls, as in a rollout: on one torch
    thread (OpenMP workers spinning next to MuJoCo's threads slow everything down many times)."""
    with torch_threads(1):
        yield


def _flat(xy: torch.Tensor) -> torch.Tensor:
    return torch.zeros(xy.shape[:-1], dtype=xy.dtype)


def _run(backend: str, ticks: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    model = load_model(asset_path("dog.xml"), (motor_actuators,), timestep=0.002)
    sim = make_simulator(model, NUM_ENVS, SimCfg(backend=backend, sensor_stage="current"), CPU)
    bind_fields(sim)
    sim.set_default_keyframe(0)
    sim.reset()
    sim.qvel[:, 0] = torch.tensor([0.0, 0.3])
    sim.forward()
    robot = Quadruped(model, QuadrupedCfg(), CPU, sim.dtype)
    controller = LowLevelController(LowLevelCfg(), robot, NUM_ENVS, CPU, sim.dtype)
    first = read_state(sim, robot)
    controller.reset(torch.arange(NUM_ENVS), first.foot_pos)
    command = torch.tensor([[0.0, 0.0, 0.0], [0.3, 0.0, 0.0]], dtype=sim.dtype)
    heading = torch.zeros(NUM_ENVS, dtype=sim.dtype)
    torques = []
    for _ in range(ticks):
        state = read_state(sim, robot)
        targets = heuristic_targets(state, controller.gait, robot, command, heading, _flat, HeuristicCfg())
        torque = controller.compute(state, targets, 0.004, sim.field("qfrc_bias")[:, robot.dof_adr])
        torques.append(torque.double())
        sim.ctrl[:, :12] = torque.reshape(NUM_ENVS, 12).to(sim.ctrl.dtype)
        sim.step(2)
    jac_and_vel = torch.cat((first.jacobian.reshape(NUM_ENVS, -1), first.foot_vel.reshape(NUM_ENVS, -1)), dim=1)
    return jac_and_vel.double(), torch.stack(torques), sim.qpos.double().clone()


def test_controller_runs_on_warp_like_on_cpu():
    cpu_frames, cpu_torques, cpu_qpos = _run("cpu", 25)
    warp_frames, warp_torques, warp_qpos = _run("warp", 25)
    torch.testing.assert_close(warp_frames, cpu_frames, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(warp_torques[0], cpu_torques[0], atol=2e-3, rtol=1e-3)
    # 0.1 s of walking: both backends move the same way (contacts and float32 make them drift apart a little)
    torch.testing.assert_close(warp_qpos, cpu_qpos, atol=5e-3, rtol=0)
    assert float(warp_qpos[1, 0] - warp_qpos[0, 0]) > 0.01  # the commanded env moved forward
