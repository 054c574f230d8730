"""Adapters: Canter's cartpole through Gymnasium's vector API, rsl_rl's OnPolicyRunner and SB3's PPO.

Episodes are shortened to 1 s (60 env steps at 60 Hz) so that a few hundred random steps see both
terminations (cart out of bounds) and time-outs.
"""

from __future__ import annotations

import importlib.metadata
import math
from typing import Any

import numpy as np
import pytest
import torch

from canter.core.errors import CanterError
from canter.envs.manager_env import ManagerBasedRLEnv
from canter.tasks import REGISTRY

SHORT_EPISODE_S = 1.0
SHORT_EPISODE_STEPS = 60  # ceil(1 s / (2 x 1/120 s))


def _cartpole(num_envs: int, seed: int = 0) -> ManagerBasedRLEnv:
    cfg = REGISTRY.get("cartpole").env_cfg()
    cfg.num_envs = num_envs
    cfg.seed = seed
    cfg.episode_length_s = SHORT_EPISODE_S
    cfg.sim.num_threads = 1
    env = ManagerBasedRLEnv(cfg)
    assert env.max_episode_length == SHORT_EPISODE_STEPS
    return env


def _parameters(module: torch.nn.Module) -> list[torch.Tensor]:
    return [p.detach().clone() for p in module.parameters()]


# --- Gymnasium ------------------------------------------------------------------------------------
def test_gymnasium_random_rollout_same_step_autoreset():
    gymnasium = pytest.importorskip("gymnasium")
    from gymnasium.wrappers.vector import ClipAction, NormalizeReward, RecordEpisodeStatistics

    from canter.envs.adapters import GymnasiumVecEnvWrapper

    num_envs = 16
    base = GymnasiumVecEnvWrapper(_cartpole(num_envs))
    assert base.metadata["autoreset_mode"] == gymnasium.vector.AutoresetMode.SAME_STEP
    assert base.single_observation_space == gymnasium.spaces.Box(-np.inf, np.inf, (4,), np.float32)
    assert base.observation_space.shape == (num_envs, 4)
    assert base.single_action_space == gymnasium.spaces.Box(-1.0, 1.0, (1,), np.float32)
    assert base.action_space.shape == (num_envs, 1)
    # Gymnasium's own same-step-aware wrappers accept it (statistics recorded below the reward scaling)
    stats_env = RecordEpisodeStatistics(ClipAction(base))
    env = NormalizeReward(stats_env)
    obs, infos = env.reset(seed=0)
    assert env.observation_space.contains(obs) and infos == {}
    env.action_space.seed(0)
    terminations = truncations = 0
    for _ in range(300):
        previous = obs
        obs, rewards, terminated, truncated, infos = env.step(env.action_space.sample())
        assert env.observation_space.contains(obs) and obs.dtype == np.float32
        assert rewards.shape == (num_envs,) and np.isfinite(rewards).all()
        assert terminated.dtype == np.bool_ and truncated.dtype == np.bool_
        assert not np.any(terminated & truncated)
        done = terminated | truncated
        terminations += int(terminated.sum())
        truncations += int(truncated.sum())
        if not done.any():
            assert infos == {}
            continue
        np.testing.assert_array_equal(infos["_final_obs"], done)
        np.testing.assert_array_equal(infos["_final_info"], done)
        for index in range(num_envs):
            final = infos["final_obs"][index]
            if done[index]:
                # the documented approximation: the observation the final action was taken from
                np.testing.assert_array_equal(final, previous[index])
                assert base.single_observation_space.contains(final)
            else:
                assert final is None
        # same-step counting: Gymnasium's statistics and Canter's agree on every ended episode
        stats, final_info = infos["episode"], infos["final_info"]
        np.testing.assert_array_equal(final_info["episode_length"][done], stats["l"][done])
        np.testing.assert_allclose(final_info["episode_return"][done], stats["r"][done], rtol=1e-4, atol=1e-4)
        assert stats["l"][done].max() <= SHORT_EPISODE_STEPS
        assert np.all(stats["l"][truncated] == SHORT_EPISODE_STEPS)
    assert terminations > 0 and truncations > 0
    assert len(stats_env.return_queue) == terminations + truncations
    env.close()


def test_gymnasium_seeding_dict_observations_and_torch_arrays():
    pytest.importorskip("gymnasium")
    from canter.envs.adapters import GymnasiumVecEnvWrapper

    env = GymnasiumVecEnvWrapper(_cartpole(8))
    with pytest.raises(CanterError, match="reset"):
        env.step(np.zeros((8, 1), dtype=np.float32))
    first, _ = env.reset(seed=3)
    again, _ = env.reset(seed=3)
    other, _ = env.reset(seed=4)
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)
    with pytest.raises(CanterError, match="options"):
        env.reset(options={"reset_mask": np.ones(8, dtype=bool)})

    torch_env = GymnasiumVecEnvWrapper(_cartpole(8), observation_groups=("policy",), array_type="torch")
    assert list(torch_env.single_observation_space.spaces) == ["policy"]
    obs, _ = torch_env.reset()
    assert isinstance(obs["policy"], torch.Tensor) and obs["policy"].shape == (8, 4)
    for _ in range(2 * SHORT_EPISODE_STEPS):
        previous = obs
        obs, rewards, terminated, truncated, infos = torch_env.step(torch.zeros(8, 1))
        assert isinstance(rewards, torch.Tensor) and rewards.dtype == torch.float32
        assert terminated.dtype == torch.bool and truncated.dtype == torch.bool
        for index in np.flatnonzero(infos.get("_final_obs", np.zeros(8, dtype=bool))):
            assert torch.equal(infos["final_obs"][index]["policy"], previous["policy"][index])
    with pytest.raises(CanterError, match="unknown group"):
        GymnasiumVecEnvWrapper(_cartpole(2), observation_groups="critic")


# --- rsl_rl ---------------------------------------------------------------------------------------
class _InPlaceObservationEnv:
    """A fake Canter VecEnv that writes its observation into the same tensor every step."""

    num_envs, num_actions, max_episode_length, step_dt = 4, 1, 10, 0.01
    device = torch.device("cpu")
    observation_shapes: dict[str, tuple[int, ...]] = {"policy": (2,)}  # noqa: RUF012

    def __init__(self) -> None:
        self.obs = {"policy": torch.zeros(4, 2)}
        self.episode_length_buf = torch.zeros(4, dtype=torch.long)

    def reset(self) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
        return self.obs, {"log": {}}

    def get_observations(self) -> dict[str, torch.Tensor]:
        return self.obs

    def step(self, actions: torch.Tensor) -> tuple[Any, ...]:
        self.obs["policy"] += 1.0
        false = torch.zeros(4, dtype=torch.bool)
        return self.obs, torch.ones(4), false, false.clone(), {"log": {}}

    def close(self) -> None:
        pass


def test_rsl_rl_wrapper_interface_zero_copy_and_time_outs():
    rsl_rl_env = pytest.importorskip("rsl_rl.env")
    from tensordict import TensorDict

    from canter.envs.adapters import RslRlVecEnvWrapper

    canter_env = _cartpole(16)
    env = RslRlVecEnvWrapper(canter_env)
    assert isinstance(env, rsl_rl_env.VecEnv)
    assert (env.num_envs, env.num_actions, env.max_episode_length) == (16, 1, SHORT_EPISODE_STEPS)
    assert env.cfg is canter_env.cfg
    obs = env.get_observations()
    assert isinstance(obs, TensorDict) and obs.batch_size == torch.Size([16])
    assert obs["policy"].data_ptr() == canter_env.get_observations()["policy"].data_ptr()  # zero-copy
    env.episode_length_buf = torch.full((16,), 3)
    assert canter_env.episode_length_buf.eq(3).all()
    env.episode_length_buf = torch.zeros(16, dtype=torch.long)
    saw_time_out = False
    for _ in range(SHORT_EPISODE_STEPS):
        obs, rewards, dones, extras = env.step(torch.zeros(16, 1))
        assert obs["policy"].data_ptr() == canter_env.obs_buf["policy"].data_ptr()
        assert rewards.shape == (16,) and dones.dtype == torch.long
        assert extras["time_outs"].dtype == torch.bool and "log" in extras
        assert torch.all(dones.bool() >= extras["time_outs"])  # a time-out is a done
        saw_time_out |= bool(extras["time_outs"].any())
    assert saw_time_out, "envs that survive a whole episode time out"
    assert any(key.startswith("Episode_Reward/") for key in extras["log"])

    fake = RslRlVecEnvWrapper(_InPlaceObservationEnv())  # type: ignore[arg-type]
    with pytest.raises(CanterError, match="clone_observations=True"):
        fake.step(torch.zeros(4, 1))
    cloned = RslRlVecEnvWrapper(_InPlaceObservationEnv(), clone_observations=True)  # type: ignore[arg-type]
    held = cloned.get_observations()["policy"]
    cloned.step(torch.zeros(4, 1))
    assert held.eq(0).all(), "the observation rsl_rl acted on is not overwritten by the next step"


def test_rsl_rl_on_policy_runner_trains_cartpole(tmp_path):
    pytest.importorskip("rsl_rl")
    if int(importlib.metadata.version("rsl-rl-lib").split(".")[0]) < 5:
        pytest.skip("this test's runner config is rsl_rl 5.x's (actor/critic model entries)")
    from rsl_rl.runners import OnPolicyRunner

    from canter.envs.adapters import RslRlVecEnvWrapper

    env = RslRlVecEnvWrapper(_cartpole(64), clip_actions=1.0)
    mlp = {"class_name": "MLPModel", "hidden_dims": [32, 32], "activation": "elu"}
    train_cfg = {
        "num_steps_per_env": 16,
        "save_interval": 100,
        "obs_groups": {"actor": ["policy"], "critic": ["policy"]},
        "actor": {**mlp, "distribution_cfg": {"class_name": "GaussianDistribution", "init_std": 1.0}},
        "critic": mlp,
        "algorithm": {
            "class_name": "PPO",
            "num_learning_epochs": 1,
            "num_mini_batches": 2,
            "learning_rate": 1e-3,
            "schedule": "fixed",
        },
    }
    torch.manual_seed(0)  # rsl_rl draws its initial weights and action noise from torch's global RNG
    runner = OnPolicyRunner(env, train_cfg, log_dir=str(tmp_path), device="cpu")
    before = _parameters(runner.alg.actor)
    losses: list[dict[str, float]] = []
    update = runner.alg.update

    def recording_update() -> dict[str, float]:
        losses.append(update())
        return losses[-1]

    runner.alg.update = recording_update  # type: ignore[method-assign]
    # random initial episode lengths (written through the episode_length_buf setter): time-outs come early
    runner.learn(num_learning_iterations=3, init_at_random_ep_len=True)
    assert len(losses) == 3
    assert all(math.isfinite(value) for loss in losses for value in loss.values())
    after = _parameters(runner.alg.actor)
    assert any(not torch.equal(a, b) for a, b in zip(before, after, strict=True))
    assert len(runner.logger.lenbuffer) > 0, "episodes ended and were counted by rsl_rl's logger"
    assert max(runner.logger.lenbuffer) <= SHORT_EPISODE_STEPS
    assert any(path.name.startswith("model_") for path in tmp_path.iterdir())


# --- Stable-Baselines3 ----------------------------------------------------------------------------
def test_sb3_step_infos_and_batched_env_methods():
    pytest.importorskip("stable_baselines3")
    from canter.envs.adapters import Sb3VecEnvWrapper

    num_envs = 16
    env = Sb3VecEnvWrapper(_cartpole(num_envs))
    env.seed(7)
    obs = env.reset()
    assert isinstance(obs, np.ndarray) and obs.shape == (num_envs, 4) and obs.dtype == np.float32
    env.seed(7)
    np.testing.assert_array_equal(env.reset(), obs)
    rng = np.random.default_rng(0)
    truncated_lengths, terminated_lengths = [], []
    for _ in range(4 * SHORT_EPISODE_STEPS):
        previous = obs
        obs, rewards, dones, infos = env.step(rng.uniform(-1, 1, (num_envs, 1)).astype(np.float32))
        assert isinstance(obs, np.ndarray) and obs.shape == (num_envs, 4)
        assert rewards.shape == (num_envs,) and rewards.dtype == np.float32
        assert dones.shape == (num_envs,) and dones.dtype == np.bool_
        assert len(infos) == num_envs
        for index in range(num_envs):
            if not dones[index]:
                assert infos[index] == {}
                continue
            info = infos[index]
            np.testing.assert_array_equal(info["terminal_observation"], previous[index])
            episode = info["episode"]
            assert isinstance(episode["r"], float) and isinstance(episode["l"], int)
            (truncated_lengths if info["TimeLimit.truncated"] else terminated_lengths).append(episode["l"])
    assert truncated_lengths and set(truncated_lengths) == {SHORT_EPISODE_STEPS}
    assert terminated_lengths and max(terminated_lengths) <= SHORT_EPISODE_STEPS

    assert env.get_attr("max_episode_length") == [SHORT_EPISODE_STEPS] * num_envs
    assert env.get_attr("render_mode", indices=[0, 3]) == [None, None]
    assert env.env_is_wrapped(object, indices=1) == [False]
    assert len(env.env_method("get_observations")) == num_envs
    env.set_attr("step_dt", env.get_attr("step_dt")[0])
    with pytest.raises(CanterError, match="indices=None"):
        env.set_attr("step_dt", 0.1, indices=[0])
    env.close()


def test_sb3_ppo_learns_a_few_rollouts_on_cartpole():
    sb3 = pytest.importorskip("stable_baselines3")
    from canter.envs.adapters import Sb3VecEnvWrapper

    env = Sb3VecEnvWrapper(_cartpole(64))
    model = sb3.PPO(
        "MlpPolicy",
        env,
        n_steps=16,
        batch_size=256,
        n_epochs=1,
        policy_kwargs={"net_arch": [32, 32]},
        seed=0,
        device="cpu",
    )
    before = _parameters(model.policy)
    # 4 rollouts of 16 steps: past the 60-step episode length, so every env has ended once
    model.learn(total_timesteps=4 * 16 * 64)
    assert model.num_timesteps == 4 * 16 * 64
    after = _parameters(model.policy)
    assert any(not torch.equal(a, b) for a, b in zip(before, after, strict=True))
    lengths = [info["l"] for info in model.ep_info_buffer]
    assert lengths and max(lengths) <= SHORT_EPISODE_STEPS, "SB3 read the Monitor-style episode infos"
