"""The manager-based env: every registered task builds and steps, NaN handling, determinism, resume."""

from __future__ import annotations

import importlib.util

import pytest
import torch

from canter.envs.manager_env import ManagerBasedRLEnv
from canter.envs.vec_env import VecEnv
from canter.tasks import REGISTRY

HAS_WARP = (
    importlib.util.find_spec("mujoco_warp") is not None and importlib.util.find_spec("warp") is not None
)
BACKENDS = [
    "cpu",
    pytest.param("warp", marks=pytest.mark.skipif(not HAS_WARP, reason="mujoco_warp not installed")),
]


def _env(task: str, num_envs: int, backend: str = "cpu", seed: int = 0, episode_s: float | None = None) -> ManagerBasedRLEnv:
    cfg = REGISTRY.get(task).env_cfg()
    cfg.num_envs = num_envs
    if episode_s is not None:
        cfg.episode_length_s = min(cfg.episode_length_s, episode_s)
    cfg.seed = seed
    cfg.sim.backend = backend  # type: ignore[assignment]
    cfg.sim.num_threads = 2
    return ManagerBasedRLEnv(cfg)


def _random_actions(env: ManagerBasedRLEnv, generator: torch.Generator) -> torch.Tensor:
    return torch.rand(env.num_envs, env.num_actions, generator=generator) * 2 - 1


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("task", REGISTRY.names())
def test_every_task_builds_and_steps(task: str, backend: str):
    num_envs = 32 if backend == "cpu" else 8
    env = _env(task, num_envs, backend, episode_s=3.0)  # short episodes: every env must end one
    assert isinstance(env, VecEnv)
    obs, _ = env.reset()
    assert set(obs) >= {"policy"}
    generator = torch.Generator().manual_seed(0)
    ended = torch.zeros(num_envs, dtype=torch.bool)
    for _ in range(env.max_episode_length + 2):
        obs, reward, terminated, truncated, _extras = env.step(_random_actions(env, generator))
        for name, shape in env.observation_shapes.items():
            assert obs[name].shape == (num_envs, *shape) and obs[name].dtype == torch.float32
            assert torch.isfinite(obs[name]).all()
        assert reward.shape == (num_envs,) and torch.isfinite(reward).all()
        assert terminated.dtype == torch.bool and not torch.any(terminated & truncated)
        ended |= terminated | truncated
    assert ended.all(), "every env ends an episode within max_episode_length steps"
    assert env.episode_length_buf.max() <= env.max_episode_length


def test_nan_in_some_envs_terminates_them_without_crashing():
    env = _env("ant", 8)
    env.reset()
    generator = torch.Generator().manual_seed(1)
    env.step(_random_actions(env, generator))
    env.sim.qvel[[2, 5]] = float("nan")
    obs, reward, terminated, _truncated, extras = env.step(_random_actions(env, generator))
    assert terminated[[2, 5]].all()
    assert torch.isfinite(obs["policy"]).all() and torch.isfinite(reward).all()
    assert reward[[2, 5]].eq(0).all()
    assert int(extras["log"]["Sim/nonfinite_resets_total"]) == 2
    assert env.episode_length_buf[[2, 5]].eq(0).all()
    nan_actions = _random_actions(env, generator)
    nan_actions[0] = float("nan")
    obs, *_ = env.step(nan_actions)
    assert torch.isfinite(obs["policy"]).all()
    assert int(env.action_manager.nonfinite_actions) == 1


def _rollout(env: ManagerBasedRLEnv, steps: int, seed: int) -> list[torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(steps):
        obs, reward, *_ = env.step(_random_actions(env, generator))
        out += [obs["policy"].clone(), reward.clone()]
    return out


def test_same_seed_is_bitwise_identical_different_seed_differs():
    runs = []
    for seed in (3, 3, 4):
        env = _env("ant", 16, seed=seed)
        env.reset()
        runs.append(_rollout(env, 40, seed=0))
    assert all(torch.equal(a, b) for a, b in zip(runs[0], runs[1], strict=True))
    assert not all(torch.equal(a, b) for a, b in zip(runs[0], runs[2], strict=True))


def test_state_dict_resume_is_bitwise_identical():
    env = _env("ant", 16)
    env.reset()
    _rollout(env, 25, seed=5)
    saved = env.state_dict()
    expected = _rollout(env, 30, seed=6)
    resumed = _env("ant", 16)
    resumed.load_state_dict(saved)
    assert torch.equal(resumed.get_observations()["policy"], saved["obs_buf"]["policy"])
    got = _rollout(resumed, 30, seed=6)
    assert all(torch.equal(a, b) for a, b in zip(expected, got, strict=True))


def test_ant_task_runs_on_another_ant_mjcf(tmp_path):
    """--model: a different ant-like model without touch sensors gets them from the spec edit."""
    import mujoco

    from canter.sim.model import asset_path

    spec = mujoco.MjSpec.from_file(str(asset_path("ant.xml")))
    for sensor in list(spec.sensors):
        if sensor.name.endswith("_touch"):
            spec.delete(sensor)
    path = tmp_path / "other_ant.xml"
    path.write_text(spec.to_xml())
    cfg = REGISTRY.get("ant").env_cfg()
    cfg.model_path = str(path)
    cfg.num_envs = 4
    env = ManagerBasedRLEnv(cfg)
    touch = [
        env.sim.model.sensor(i).name
        for i in range(env.sim.model.nsensor)
        if env.sim.model.sensor(i).name.endswith("_touch")
    ]
    assert len(touch) == 4
    obs, _ = env.reset()
    assert obs["policy"].shape == (4, 41)
