"""A Canter VecEnv as a `gymnasium.vector.VectorEnv` (Gymnasium >= 1.1, same-step autoreset).

    env = GymnasiumVecEnvWrapper(ManagerBasedRLEnv(cfg))
    obs, infos = env.reset(seed=0)
    obs, rewards, terminations, truncations, infos = env.step(env.action_space.sample())

Canter resets an env inside the step that ends its episode, and returns the first observation of the
new episode: Gymnasium calls this `AutoresetMode.SAME_STEP`, declared in `metadata["autoreset_mode"]`
so that Gymnasium's wrappers (RecordEpisodeStatistics, NormalizeReward, ...) count steps correctly.
As in SyncVectorEnv's same-step mode, a step in which some env ended carries
  infos["final_obs"]: object array (num_envs,), the final observation of each ended env, None elsewhere;
  infos["final_info"]: {"episode_return": (num_envs,) float32, "episode_length": (num_envs,) float32,
                        each with its "_key" mask}, Canter's episode statistics;
  infos["_final_obs"], infos["_final_info"]: (num_envs,) bool, which envs ended.

Approximation: Canter does not keep the true final observation s_T of an ended episode. final_obs holds
the observation s_{T-1} that the final action was taken from (the last one this wrapper returned for
that env), so bootstrapping a time-out with V(final_obs) uses V(s_{T-1}) in place of V(s_T) - the same
approximation rsl_rl's PPO makes (it adds gamma * V(s_t) of the acted-on observation on time-outs).

array_type="numpy" (default) is the classic pipeline: actions come in as numpy, and every output is
copied to the host with `.cpu().numpy()`. array_type="torch" keeps everything as tensors on env.device.
Canter's per-iteration log scalars (extras["log"]) are not per-env, so they are not put in infos; the
last step's are in `self.log`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import torch

from canter.core.errors import CanterError, ConfigError
from canter.envs.adapters import _common
from canter.envs.vec_env import VecEnv

try:
    from gymnasium.vector import AutoresetMode, VectorEnv
    from gymnasium.vector.utils import batch_space
except ImportError as err:  # pragma: no cover - exercised only without gymnasium
    raise CanterError("GymnasiumVecEnvWrapper needs gymnasium>=1.1: pip install 'gymnasium>=1.1'") from err


class GymnasiumVecEnvWrapper(VectorEnv):
    """A Canter VecEnv seen through Gymnasium's vector-env API (same-step autoreset).

    Args:
        env: the Canter VecEnv (e.g. ManagerBasedRLEnv); it keeps its own num_envs and device.
        observation_groups: a group name (observations are one (num_envs, dim) float32 Box), or a
            sequence of names (observations are a Dict of such Boxes keyed by group).
        action_bound: actions live in Box(-action_bound, action_bound, (num_actions,), float32) and are
            clipped to it before the env sees them (the task's action terms then scale them). None gives
            an unbounded Box and no clipping.
        array_type: "numpy" (host arrays, copied out of the env's tensors) or "torch" (tensors on
            env.device, no transfer).
        copy: numpy only: copy observations/rewards off the env's tensors (True, like SyncVectorEnv's
            default), or return views that share memory with them on a CPU env (False).
    """

    metadata: dict[str, Any] = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}  # noqa: RUF012

    def __init__(
        self,
        env: VecEnv,
        observation_groups: str | Sequence[str] = "policy",
        action_bound: float | None = 1.0,
        array_type: Literal["numpy", "torch"] = "numpy",
        copy: bool = True,
    ):
        if array_type not in ("numpy", "torch"):
            raise ConfigError(f"array_type: must be 'numpy' or 'torch', got {array_type!r}")
        self.env = env
        self.num_envs = env.num_envs
        self.device = env.device
        self.array_type = array_type
        self.copy = copy
        self.action_bound = action_bound
        self.render_mode = None
        self._groups, self._as_dict = _common.resolve_groups(env, observation_groups)
        self.single_observation_space = _common.single_observation_space(env, self._groups, self._as_dict)
        self.single_action_space = _common.single_action_space(env, action_bound)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.log: dict[str, Any] = {}
        self._last_obs: Any = None

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Reset every env. seed reseeds the env's generator (and this wrapper's np_random).

        Options such as {"reset_mask": ...} (partial resets) are not supported: Canter resets the envs
        that end by itself, inside step().
        """
        if options:
            raise CanterError(
                f"GymnasiumVecEnvWrapper.reset: options are not supported (got {sorted(options)})"
            )
        super().reset(seed=seed)
        if seed is not None:
            _common.reseed(self.env, seed)
        obs, extras = self.env.reset()
        self.log = extras.get("log", {})
        self._last_obs = self._convert_obs(obs)
        return self._last_obs, {}

    def step(self, actions: Any) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        """actions: (num_envs, num_actions). Returns obs, rewards (num_envs,) float32,
        terminations and truncations (num_envs,) bool, and infos (see the module docstring)."""
        if self._last_obs is None:
            raise CanterError("GymnasiumVecEnvWrapper.step: call reset() first")
        env_actions = _common.actions_to_env(actions, self.env, self.action_bound)
        obs, reward, terminated, truncated, extras = self.env.step(env_actions)
        self.log = extras.get("log", {})
        done = terminated | truncated
        if self.array_type == "numpy":
            reward, terminated, truncated = (
                _common.to_numpy(reward, self.copy),
                _common.to_numpy(terminated),
                _common.to_numpy(truncated),
            )
            done_host = np.logical_or(terminated, truncated)
        else:
            done_host = _common.to_numpy(done)  # the one host read of this step, for infos
        previous_obs, self._last_obs = self._last_obs, self._convert_obs(obs)
        infos: dict[str, Any] = {}
        if done_host.any():
            infos = self._final_infos(done_host, previous_obs, extras)
        return self._last_obs, reward, terminated, truncated, infos

    def render(self) -> None:
        """Canter envs do not render through this wrapper (render_mode is None)."""
        return None

    def close_extras(self, **kwargs: Any) -> None:
        self.env.close()

    def _convert_obs(self, obs: dict[str, torch.Tensor]) -> Any:
        selected = _common.select(obs, self._groups, self._as_dict)
        if self.array_type == "torch":
            return selected
        return _common.tree_map(lambda tensor: _common.to_numpy(tensor, self.copy), selected)

    def _final_infos(self, done: np.ndarray, previous_obs: Any, extras: dict[str, Any]) -> dict[str, Any]:
        # a Python loop over the envs that ended only: Gymnasium's final_obs is one object per env
        final_obs = np.full(self.num_envs, None, dtype=object)
        for index in np.flatnonzero(done):
            final_obs[index] = _common.row(previous_obs, int(index))
        final_info: dict[str, Any] = {}
        for key in ("episode_return", "episode_length"):
            if key in extras:
                value = _common.to_numpy(extras[key])
                final_info[key] = np.where(done, value, 0.0).astype(np.float32)
                final_info[f"_{key}"] = done.copy()
        return {
            "final_obs": final_obs,
            "_final_obs": done,
            "final_info": final_info,
            "_final_info": done.copy(),
        }
