"""A Canter VecEnv as an `rsl_rl.env.VecEnv` (rsl-rl-lib >= 3: TensorDict observations).

    env = RslRlVecEnvWrapper(ManagerBasedRLEnv(cfg))
    runner = rsl_rl.runners.OnPolicyRunner(env, train_cfg, log_dir=..., device=str(env.device))

rsl_rl's interface (rsl_rl/env/vec_env.py):
  get_observations() -> TensorDict of the observation groups, batch_size (num_envs,);
  step(actions) -> (observations TensorDict, rewards (num_envs,), dones (num_envs,), extras) with
    dones = terminated | truncated (long, as Isaac Lab and mjlab give it),
    extras["time_outs"] = truncated (rsl_rl's PPO adds gamma * V(s_t) to the reward there),
    extras["log"] = Canter's per-step log scalars (episode reward terms, ...), which rsl_rl averages
      and writes per iteration;
  attributes num_envs, num_actions, max_episode_length, episode_length_buf, device, cfg.
Canter's own extras ("episode_return", "episode_length") are passed through as well.

Zero-copy: rsl_rl takes torch tensors on the env's device, so observations, rewards and flags are
handed over as they are (a TensorDict wraps the group tensors without copying them).
"""

from __future__ import annotations

from typing import Any

import torch

from canter.core.errors import CanterError, ConfigError
from canter.envs.vec_env import Observations, VecEnv

try:
    from rsl_rl.env import VecEnv as RslRlVecEnv
    from tensordict import TensorDict
except ImportError as err:  # pragma: no cover - exercised only without rsl_rl
    raise CanterError("RslRlVecEnvWrapper needs rsl-rl-lib>=3: pip install 'rsl-rl-lib>=3'") from err


class RslRlVecEnvWrapper(RslRlVecEnv):
    """A Canter VecEnv seen through rsl_rl's VecEnv interface. Resets the env once on construction
    (rsl_rl's runner never calls reset; it starts from get_observations()).

    Args:
        env: the Canter VecEnv (e.g. ManagerBasedRLEnv).
        clip_actions: if set, actions are clamped to [-clip_actions, clip_actions] before the env sees
            them (Isaac Lab's convention); None passes them through (the task's action terms scale them).
        clone_observations: rsl_rl keeps the observation it acted on and copies it into its rollout
            storage only after env.step(); an env that rewrites an observation tensor in place on the
            next step would corrupt it. ManagerBasedRLEnv returns fresh tensors, so the default is
            zero-copy; step() raises if a group comes back in the same memory as the step before, and
            clone_observations=True clones every group instead.
    """

    def __init__(self, env: VecEnv, clip_actions: float | None = None, clone_observations: bool = False):
        if clip_actions is not None and not clip_actions > 0:
            raise ConfigError(f"clip_actions: must be > 0 or None, got {clip_actions}")
        self.env = env
        self.clip_actions = clip_actions
        self.clone_observations = clone_observations
        self.num_envs = env.num_envs
        self.num_actions = env.num_actions
        self.max_episode_length = env.max_episode_length
        self.device = env.device
        self.cfg = getattr(env, "cfg", {})
        self._last_obs: Observations = {}
        self.reset()

    @property
    def episode_length_buf(self) -> torch.Tensor:
        """(num_envs,) long: env steps into the current episode (the env's own buffer)."""
        return self._env_episode_length_buf()

    @episode_length_buf.setter
    def episode_length_buf(self, value: torch.Tensor) -> None:
        # OnPolicyRunner.learn(init_at_random_ep_len=True) assigns random lengths to spread time-outs
        self._env_episode_length_buf().copy_(value)

    def get_observations(self) -> TensorDict:
        """The current observations as a TensorDict of (num_envs, dim) float32 groups."""
        return self._wrap(self.env.get_observations())

    def reset(self) -> tuple[TensorDict, dict[str, Any]]:
        obs, extras = self.env.reset()
        return self._wrap(obs), extras

    def step(self, actions: torch.Tensor) -> tuple[TensorDict, torch.Tensor, torch.Tensor, dict[str, Any]]:
        """actions: (num_envs, num_actions). Returns obs, rewards (num_envs,) float32, dones (num_envs,)
        long and extras with "time_outs" (num_envs,) bool and "log"."""
        if self.clip_actions is not None:
            actions = actions.clamp(-self.clip_actions, self.clip_actions)
        obs, reward, terminated, truncated, extras = self.env.step(actions)
        if not self.clone_observations:
            self._check_not_reused(obs)
        dones = (terminated | truncated).to(torch.long)
        extras = {**extras, "time_outs": truncated, "log": _reported(extras.get("log", {}))}
        return self._wrap(obs), reward, dones, extras

    def close(self) -> None:
        self.env.close()

    def _wrap(self, obs: Observations) -> TensorDict:
        if self.clone_observations:
            obs = {name: tensor.clone() for name, tensor in obs.items()}
        self._last_obs = dict(obs)
        return TensorDict(obs, batch_size=[self.num_envs])

    def _check_not_reused(self, obs: Observations) -> None:
        # the previous tensors are still referenced (self._last_obs), so equal addresses mean the env
        # wrote this step's observation into the same buffer: a host-side pointer compare, no sync
        for name, tensor in obs.items():
            previous = self._last_obs.get(name)
            if previous is not None and tensor.data_ptr() == previous.data_ptr():
                raise CanterError(
                    f"observation group {name!r} is written in place each step, which would corrupt the "
                    "observations rsl_rl stores after stepping: use RslRlVecEnvWrapper(..., clone_observations=True)"
                )

    def _env_episode_length_buf(self) -> torch.Tensor:
        buffer = getattr(self.env, "episode_length_buf", None)
        if not isinstance(buffer, torch.Tensor):
            raise CanterError(f"{type(self.env).__name__} has no `episode_length_buf` tensor for rsl_rl")
        return buffer


def _reported(log: dict[str, Any]) -> dict[str, Any]:
    """The log scalars rsl_rl should average: a NaN is a per-reset mean of a step in which no env reset
    (an env that selects resets by mask logs one every step; canter.core.selection.mean), left out."""
    return {k: v for k, v in log.items() if not (isinstance(v, torch.Tensor) and bool(torch.isnan(v).any()))}
