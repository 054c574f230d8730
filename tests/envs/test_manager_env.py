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
@pytest.mark.parametrize("task", REGISTRY.names("mujoco"))
def test_every_task_builds_and_steps(task: str, backend: str):
    num_envs = 32 if backend == "cpu" else 8
    # short episodes: every env must end one (shorter on Warp's CPU device, which runs its kernels on one core)
    env = _env(task, num_envs, backend, episode_s=3.0 if backend == "cpu" else 1.0)
    assert isinstance(env, VecEnv)
    obs, _ = env.reset()
    assert set(obs) >= {"policy"}
    generator = torch.Generator().manual_seed(0)
    ended = torch.zeros(num_envs, dtype=torch.bool)
    for _ in range(env.max_episode_length + 2):
        obs, reward, terminated, truncated, _extras = env.step(_random_actions(env, generator))
        for name, shape in env.observation_shapes.items():
            assert obs[name].shape == (num_envs, *shape) and obs[name].dtype == env.observation_dtypes[name]
            assert obs[name].dtype in (torch.float32, torch.uint8)  # uint8 only for RGB image groups
            assert obs[name].dtype == torch.uint8 or torch.isfinite(obs[name]).all()
        assert reward.shape == (num_envs,) and torch.isfinite(reward).all()
        assert terminated.dtype == torch.bool and not torch.any(terminated & truncated)
        ended |= terminated | truncated
    assert ended.all(), "every env ends an episode within max_episode_length steps"
    assert env.episode_length_buf.max() <= env.max_episode_length
    if backend == "cpu":  # and its policy exports: the metadata describes every action term (here, where the env is built)
        _describes_its_policy(env, task)


def _describes_its_policy(env: ManagerBasedRLEnv, task: str) -> None:
    from canter.core.rng import make_generator
    from canter.export.describe import describe_policy
    from canter.export.exporter import exportable
    from canter.export.metadata import PolicyMetadata
    from canter.rl.factory import make_policy

    agent_cfg = REGISTRY.get(task).agent_cfg
    assert agent_cfg is not None
    policy = make_policy(env.observation_shapes, env.num_actions, agent_cfg().policy, init_generator=make_generator(0, "cpu"))
    actor, group = exportable(policy, {g: env.observation_dtypes[g] for g in policy.image_groups})
    metadata = describe_policy(env, actor, task, group)
    assert metadata.action_dim == env.num_actions and metadata.num_actuators >= 1
    assert PolicyMetadata.from_props(metadata.to_props(), task) == metadata


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


def _cartpole_with_startup_mass(seed: int) -> ManagerBasedRLEnv:
    from canter import mdp
    from canter.managers.event import EventTermCfg
    from canter.scene.entity import bodies

    cfg = REGISTRY.get("cartpole").env_cfg()
    cfg.num_envs, cfg.seed = 8, seed
    cfg.events["pole_mass"] = EventTermCfg(
        func=mdp.randomize_added_mass, mode="startup", params={"bodies": bodies("pole"), "mass_range": (0.1, 0.5)}
    )
    return ManagerBasedRLEnv(cfg)


def test_startup_randomization_is_logged_once_and_again_after_a_resume():
    from canter.mdp.randomization import randomization_summary

    env = _cartpole_with_startup_mass(seed=1)
    drawn = env.randomization_state["added_mass"].clone()
    assert drawn.shape == (8, 1) and bool(((drawn >= 0.1) & (drawn <= 0.5)).all())
    summary = randomization_summary("added_mass", drawn)
    _, extras = env.reset()
    assert extras["log"]["Randomization/added_mass/mean"] == summary["Randomization/added_mass/mean"]
    keys = list(summary)
    first = env.step(torch.zeros(8, 1))[4]["log"]
    assert all(torch.equal(first[key], summary[key]) for key in keys)  # the step the runner sees
    assert not any(key in env.step(torch.zeros(8, 1))[4]["log"] for key in keys)  # once only
    # the state travels with the env's checkpoint; a resumed env logs the restored draws once
    saved = env.state_dict()
    resumed = _cartpole_with_startup_mass(seed=2)  # its own startup draws differ ...
    assert not torch.equal(resumed.randomization_state["added_mass"], drawn)
    resumed.load_state_dict(saved)  # ... and are replaced by the checkpoint's
    assert torch.equal(resumed.randomization_state["added_mass"], drawn)
    log = resumed.step(torch.zeros(8, 1))[4]["log"]
    assert all(torch.equal(log[key], summary[key]) for key in keys)
    assert not any(key in resumed.step(torch.zeros(8, 1))[4]["log"] for key in keys)


def test_domain_randomized_env_resumes_its_randomization_logs_bitwise():
    """dog-flat-dr, episodes staggered so that only some envs reset at a time: after
    load_state_dict the logged randomization statistics (over all envs, drawn or restored rows)
    and everything else match an env that never stopped."""
    env = _env("dog-flat-dr", 8, episode_s=0.2)  # 10-step episodes
    env.reset()
    env.episode_length_buf.copy_(torch.arange(8))  # each env at another point of its episode
    _rollout(env, 3, seed=1)
    saved = env.state_dict()
    resumed = _env("dog-flat-dr", 8, episode_s=0.2)
    resumed.load_state_dict(saved)
    generator = torch.Generator().manual_seed(2)
    partial_resets = 0
    for _ in range(12):
        actions = _random_actions(env, generator)
        a, b = env.step(actions), resumed.step(actions)
        assert all(torch.equal(x, y) for x, y in zip(a[1:4], b[1:4], strict=True))
        assert a[4]["log"].keys() == b[4]["log"].keys()
        for key, value in a[4]["log"].items():
            assert torch.equal(torch.as_tensor(value), torch.as_tensor(b[4]["log"][key])), key
        ended = int((a[2] | a[3]).sum())
        partial_resets += 0 < ended < 8 and "Randomization/friction/mean" in a[4]["log"]
    assert partial_resets > 0
    for name, values in env.randomization_state.items():
        assert torch.equal(resumed.randomization_state[name], values), name


def _with_forced_resets(by_mask: bool) -> ManagerBasedRLEnv:
    """dog-flat (reset events, DR, commands, pushes) stepped with zero actions; envs 1 and 4 reach
    their time limit at the 4th step. `by_mask`: lifecycle calls get masks, as on the warp backend."""
    env = _env("dog-flat", 6)
    env.sim.resets_on_device = by_mask  # the cpu backend accepts masks too
    env.reset()
    zeros = torch.zeros(env.num_envs, env.num_actions)
    for _ in range(3):
        env.step(zeros)
    env.episode_length_buf[torch.tensor([1, 4])] = env.max_episode_length - 1
    for _ in range(4):
        env.step(zeros)
    return env


def test_resets_by_mask_touch_only_the_envs_that_ended():
    by_ids, by_mask = _with_forced_resets(False), _with_forced_resets(True)
    ended, kept = torch.tensor([1, 4]), torch.tensor([0, 2, 3, 5])
    assert by_mask.episode_length_buf.tolist() == by_ids.episode_length_buf.tolist() == [7, 3, 7, 7, 3, 7]
    # the other envs' physics does not see the resets, whatever form they took
    for name in ("qpos", "qvel", "ctrl"):
        assert torch.equal(getattr(by_mask.sim, name)[kept], getattr(by_ids.sim, name)[kept])
    # the ended envs started again: from fresh draws (a mask draws for every env), so not the same ones
    assert not torch.equal(by_mask.sim.qpos[ended], by_ids.sim.qpos[ended])
    command = by_mask.command_manager.get_command("base_velocity")
    assert torch.equal(command[kept], by_ids.command_manager.get_command("base_velocity")[kept])
    # nor do the other envs' rewards
    assert torch.equal(by_mask.episode_return[kept], by_ids.episode_return[kept])
