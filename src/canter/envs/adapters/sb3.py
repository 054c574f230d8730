"""A Canter VecEnv as a `stable_baselines3.common.vec_env.VecEnv` (Stable-Baselines3 >= 2.6).

    env = Sb3VecEnvWrapper(ManagerBasedRLEnv(cfg))
    model = stable_baselines3.PPO("MlpPolicy", env, n_steps=16, batch_size=256).learn(100_000)

The classic numpy pipeline: SB3 hands actions over as numpy and expects numpy back, so every step
copies the observations, rewards and dones to the host with `.cpu().numpy()` (and the actions to
env.device). reset() returns the observations only; step_wait() returns (obs, rewards (num_envs,)
float32, dones (num_envs,) bool, infos), infos a list of one dict per env. For an env whose episode
ended in this step its dict holds, as SB3's DummyVecEnv + Monitor would:
  "TimeLimit.truncated": bool, the episode ended by a time-out (SB3 then bootstraps its return),
  "terminal_observation": see the approximation below,
  "episode": {"r": return, "l": length in env steps, "t": seconds since this wrapper was made}.
The returned observation of an ended env is the first of its next episode, as in SB3.

Approximation: Canter does not keep the true final observation s_T of an ended episode.
"terminal_observation" holds s_{T-1}, the observation the final action was taken from (the last one
this wrapper returned for that env), so SB3's time-out bootstrap adds gamma * V(s_{T-1}) instead of
gamma * V(s_T) - the approximation rsl_rl's PPO makes on every time-out.

A Canter env is one batched object, not num_envs separate gym.Env: get_attr answers the same value for
every index, set_attr and env_method act on the whole batch (and refuse a subset of indices), seed()
reseeds the one generator the batch shares, and no env is wrapped in a gym.Wrapper.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from canter.core.errors import CanterError
from canter.envs.adapters import _common
from canter.envs.vec_env import VecEnv

try:
    from stable_baselines3.common.vec_env import VecEnv as Sb3VecEnv
except ImportError as err:  # pragma: no cover - exercised only without stable-baselines3
    raise CanterError(
        "Sb3VecEnvWrapper needs stable-baselines3>=2.6: pip install 'stable-baselines3>=2.6'"
    ) from err


class Sb3VecEnvWrapper(Sb3VecEnv):
    """A Canter VecEnv seen through Stable-Baselines3's VecEnv interface.

    Args:
        env: the Canter VecEnv (e.g. ManagerBasedRLEnv).
        observation_groups: a group name (observations are one float32 Box, for "MlpPolicy"), or a
            sequence of names (a Dict of Boxes keyed by group, for "MultiInputPolicy").
        action_bound: actions live in Box(-action_bound, action_bound, (num_actions,), float32) (SB3
            clips its policy's actions to it) and are clipped again here; None gives an unbounded Box.
    """

    def __init__(
        self,
        env: VecEnv,
        observation_groups: str | Sequence[str] = "policy",
        action_bound: float | None = 1.0,
    ):
        self.env = env
        self.device = env.device
        self.action_bound = action_bound
        self.render_mode = None  # read through get_attr("render_mode") by SB3's VecEnv.__init__
        self._groups, self._as_dict = _common.resolve_groups(env, observation_groups)
        observation_space = _common.single_observation_space(env, self._groups, self._as_dict)
        action_space = _common.single_action_space(env, action_bound)
        super().__init__(env.num_envs, observation_space, action_space)
        self._actions: Any = None
        self._last_obs: Any = None
        self._start_time = time.perf_counter()

    # --- stepping ---------------------------------------------------------------------------------
    def reset(self) -> Any:
        """Reset every env; applies the seed given to seed() since the last reset, if any."""
        if self._seeds[0] is not None:
            _common.reseed(self.env, self._seeds[0])
        self._reset_seeds()
        self._reset_options()
        obs, _ = self.env.reset()
        self.reset_infos = [{} for _ in range(self.num_envs)]
        self._last_obs = self._to_numpy_obs(obs)
        return self._last_obs

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = _common.actions_to_env(actions, self.env, self.action_bound)

    def step_wait(self) -> tuple[Any, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        if self._last_obs is None:
            raise CanterError("Sb3VecEnvWrapper.step: call reset() first")
        obs, reward, terminated, truncated, extras = self.env.step(self._actions)
        rewards = _common.to_numpy(reward)
        truncated_host = _common.to_numpy(truncated)
        dones = np.logical_or(_common.to_numpy(terminated), truncated_host)
        previous_obs, self._last_obs = self._last_obs, self._to_numpy_obs(obs)
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        ended = np.flatnonzero(dones)
        if ended.size:
            episode_return = _common.to_numpy(extras["episode_return"])
            episode_length = _common.to_numpy(extras["episode_length"])
            seconds = round(time.perf_counter() - self._start_time, 6)
            # a Python loop over the envs that ended only: SB3's infos are one dict per env
            for index in ended.tolist():
                infos[index] = {
                    "TimeLimit.truncated": bool(truncated_host[index]),
                    "terminal_observation": _common.row(previous_obs, index),
                    "episode": {
                        "r": float(episode_return[index]),
                        "l": int(episode_length[index]),
                        "t": seconds,
                    },
                }
        return self._last_obs, rewards, dones, infos

    def close(self) -> None:
        self.env.close()

    # --- attribute access: one batched object -----------------------------------------------------
    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        """The attribute of the Canter env (else of this wrapper), once per index."""
        target = self.env if hasattr(self.env, attr_name) else self
        value = getattr(target, attr_name)
        return [value for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        """Set the attribute on the Canter env (all envs at once)."""
        self._require_all(indices, "set_attr")
        setattr(self.env, attr_name, value)

    def env_method(
        self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any
    ) -> list[Any]:
        """Call the Canter env's method once (it acts on the whole batch); its result, once per env."""
        self._require_all(indices, "env_method")
        result = getattr(self.env, method_name)(*method_args, **method_kwargs)
        return [result for _ in range(self.num_envs)]

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        """No Canter env is wrapped in a gym.Wrapper (this wrapper's infos already carry the Monitor
        fields SB3 reads: "episode" r/l/t)."""
        return [False for _ in self._get_indices(indices)]

    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        """Reseed the batch's one generator at the next reset(); every env reports the same seed."""
        self._seeds = [seed for _ in range(self.num_envs)]
        return list(self._seeds)

    def get_images(self) -> Sequence[np.ndarray | None]:
        """Canter envs do not render through this wrapper (render_mode is None)."""
        return [None for _ in range(self.num_envs)]

    # --- helpers ----------------------------------------------------------------------------------
    def _to_numpy_obs(self, obs: dict[str, Any]) -> Any:
        return _common.tree_map(_common.to_numpy, _common.select(obs, self._groups, self._as_dict))

    def _require_all(self, indices: Any, method: str) -> None:
        chosen: Iterable[int] = self._get_indices(indices)
        if sorted(chosen) != list(range(self.num_envs)):
            raise CanterError(
                f"Sb3VecEnvWrapper.{method}: a Canter env is one batched object; pass indices=None (all envs)"
            )
