"""dog-stones: the task builds and steps on the cpu backend with the controller at its own rate,
its terms read what they should, the curriculum follows success, checkpoints restore the
controller, and the stepping-stone evaluation runs end to end."""

from __future__ import annotations

import pytest
import torch

from canter.bench.stones import (
    HeuristicPolicy,
    StonesResult,
    build_level_env,
    level_table,
    run_episodes,
    stones_args,
    stones_markdown,
)
from canter.control.kinematics import read_state
from canter.core.device import torch_threads
from canter.envs.manager_env import ManagerBasedRLEnv
from canter.mdp import controller_action as ctl
from canter.mdp.controller_action import ACTION_DIM, QuadrupedControllerAction
from canter.tasks import REGISTRY
from canter.tasks.stones import mdp as stones


@pytest.fixture(autouse=True)
def _one_torch_thread():
    """The controller's small tensor ops run between physics calls, as in a rollout: on one torch
    thread (OpenMP workers spinning next to MuJoCo's threads slow everything down many times)."""
    with torch_threads(1):
        yield


def _env(num_envs: int = 4) -> ManagerBasedRLEnv:
    cfg = REGISTRY.get("dog-stones").env_cfg()
    cfg.num_envs = num_envs
    return ManagerBasedRLEnv(cfg)


@pytest.fixture(scope="module")
def env() -> ManagerBasedRLEnv:
    return _env()


def test_builds_and_steps_with_the_controller_at_250_hz(env, monkeypatch):
    term = env.action_manager.term("controller")
    assert isinstance(term, QuadrupedControllerAction)
    assert env.num_actions == ACTION_DIM and env.action_manager.physics_steps_per_tick == 2
    obs, _ = env.reset()
    assert obs["policy"].shape == (4, 291) and obs["critic"].shape == (4, 291)
    calls = []
    original = term.apply
    monkeypatch.setattr(term, "apply", lambda ctrl, action: (calls.append(1), original(ctrl, action)))
    generator = torch.Generator().manual_seed(0)
    for _ in range(3):
        action = torch.rand(4, ACTION_DIM, generator=generator) * 2 - 1
        obs, reward, _, _, _ = env.step(action)
        assert torch.isfinite(obs["policy"]).all() and torch.isfinite(reward).all()
    assert len(calls) == 3 * 5  # decimation 10 / 2 physics steps per tick
    ctrl = env.sim.ctrl[:, :12]
    limit = term.robot.torque_limit.reshape(12)
    assert bool((ctrl.abs() <= limit + 1e-9).all()) and bool((ctrl != 0).any())


def test_zero_action_is_the_heuristic_and_walks_forward(env):
    env.reset()
    start = stones.progress(env).clone()
    for _ in range(25):  # 0.5 s
        _, _, terminated, _, _ = env.step(torch.zeros(env.num_envs, ACTION_DIM))
        assert not terminated.any()
    assert bool((stones.progress(env) - start > 0.08).all())
    term = env.action_manager.term("controller")
    assert isinstance(term, QuadrupedControllerAction) and term.targets is not None
    # the footholds lie on the terrain (sphere centre one foot radius above it)
    footholds = term.targets.footholds
    ground = env.terrain.height_at(footholds[..., 0:2]) if env.terrain is not None else 0.0
    torch.testing.assert_close(footholds[..., 2] - ground, torch.full_like(footholds[..., 2], 0.022))


def test_a_clip_bounds_the_actions_the_controller_uses(env):
    """Unclipped by default (as dog-stones was trained); with a clip, an action beyond it asks for the
    same targets as the clip's bound."""
    term = env.action_manager.term("controller")
    assert isinstance(term, QuadrupedControllerAction) and term.cfg.clip is None
    env.reset()
    state = read_state(env.sim, term.robot)
    big, bound = torch.full((env.num_envs, ACTION_DIM), 3.0), torch.full((env.num_envs, ACTION_DIM), 1.0)
    assert not torch.equal(term.targets_from_action(big, state).acc_lin, term.targets_from_action(bound, state).acc_lin)
    term.cfg.clip = (-1.0, 1.0)
    try:
        clipped, at_bound = term.targets_from_action(big, state), term.targets_from_action(bound, state)
    finally:
        term.cfg.clip = None
    for name in ("acc_lin", "acc_ang", "phase_speed", "footholds"):
        torch.testing.assert_close(getattr(clipped, name), getattr(at_bound, name), rtol=0, atol=0)


def test_foothold_observations_see_the_gaps_the_heuristic_would_step_into():
    args = stones_args(None, [])
    env = build_level_env(args, [9], 1)
    env.reset()
    term = env.action_manager.term("controller")
    assert isinstance(term, QuadrupedControllerAction)
    planned = ctl.nominal_footholds_heading(env).reshape(4, 2)
    # at rest the Raibert footholds are the shoulders plus k (0 − v_des) = −0.08 · 0.5 m along x
    torch.testing.assert_close(planned[:, 0], term.robot.shoulder_offset_b[:, 0].float().to(planned.dtype) - 0.04,
                               atol=0.02, rtol=0)
    # move the robot over the stones: some scan points around the footholds lie over gaps
    env.sim.qpos[:, 0] += 1.5
    env.sim.forward()
    env.scene.invalidate()
    scan = ctl.foothold_scan(env).reshape(4, 9)
    assert float(scan.max()) > 0.3 and float(scan.min()) < 0.1  # gaps (0.5 m pits) and stones


def test_goal_gap_and_curriculum_terms(env):
    env.reset()
    origin = env.terrain.env_origins.to(env.sim.dtype)
    env.sim.qpos[:, 0] = origin[:, 0] + torch.tensor([2.7, 1.0, 0.1, 0.5], dtype=env.sim.dtype)
    assert stones.reached_goal(env, distance=2.6).tolist() == [True, False, False, False]
    assert not stones.base_too_low(env, height=0.12).any()
    env.episode_length_buf[:] = 10
    levels = env.terrain.terrain_levels.clone()
    stones.stones_levels(env, torch.arange(4), distance=2.6)
    # promoted (past the top row: a random row), kept, demoted (clamped at 0), kept
    assert env.terrain.terrain_levels[1] == levels[1] and env.terrain.terrain_levels[3] == levels[3]
    assert env.terrain.terrain_levels[2] == max(int(levels[2]) - 1, 0)
    assert int(levels[0]) == env.terrain.num_rows - 1 or env.terrain.terrain_levels[0] == levels[0] + 1


def test_checkpoint_restores_the_controller_state_bitwise():
    env = _env(2)
    env.reset()
    action = torch.full((2, ACTION_DIM), 0.3)
    for _ in range(3):
        env.step(action)
    state = env.state_dict()
    first = [env.step(action)[0]["policy"].clone() for _ in range(2)]
    env.load_state_dict(state)
    again = [env.step(action)[0]["policy"].clone() for _ in range(2)]
    for a, b in zip(first, again, strict=True):
        torch.testing.assert_close(a, b, rtol=0, atol=0)


def test_level_evaluation_runs_one_episode_per_env():
    args = stones_args(None, ["--env.episode-length-s", "0.2"])
    env = build_level_env(args, [0, 9], 2)
    assert env.terrain.terrain_levels.tolist() == [0, 0, 9, 9]
    names = env.termination_manager.names
    assert env.terrain.map is not None
    assert all(env.terrain.map.names[env.terrain.map.types[0, int(c)]] == "stone_rows" for c in env.terrain.terrain_types)
    outcome = run_episodes(env, HeuristicPolicy(env.num_actions))
    assert outcome["length"].tolist() == [10, 10, 10, 10]  # 0.2 s at 50 Hz: time-outs
    rows = level_table([0, 9], 2, outcome, names)
    assert [row.success_rate for row in rows] == [0.0, 0.0]
    assert rows[0].endings["time_out"] == 1.0
    result = StonesResult(task="dog-stones", levels=[0, 9], episodes_per_level=2, run_dir=None,
                          controllers={"heuristic": rows})
    assert result.to_json()["heuristic"][0]["success_rate"] == 0.0  # the report's layout
    table = stones_markdown(result)
    assert table.splitlines()[2].startswith("| 0 | 0.00 |")
