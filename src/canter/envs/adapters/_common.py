"""What the adapters share: observation-group selection, spaces, action clipping, host transfer, seeding.

Nothing here imports an optional library at module level; `gymnasium.spaces` is imported inside the
functions that build spaces (Stable-Baselines3 uses Gymnasium's spaces too).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from canter.core.errors import CanterError, ConfigError
from canter.envs.vec_env import Observations, VecEnv

if TYPE_CHECKING:
    from gymnasium import spaces


def resolve_groups(env: VecEnv, observation_groups: str | Sequence[str]) -> tuple[tuple[str, ...], bool]:
    """Observation group names to expose and whether they form a Dict (a sequence) or one Box (a str)."""
    as_dict = not isinstance(observation_groups, str)
    names = tuple(observation_groups) if as_dict else (observation_groups,)
    have = env.observation_shapes
    unknown = [name for name in names if name not in have]
    if not names or unknown:
        raise ConfigError(
            f"observation_groups: unknown group(s) {unknown or '(none given)'} (have: {', '.join(have)})"
        )
    return names, as_dict  # type: ignore[return-value]


def single_observation_space(env: VecEnv, names: tuple[str, ...], as_dict: bool) -> spaces.Space:
    """Box(-inf, inf, (dim,), float32) of one group, or a Dict of such Boxes keyed by group name."""
    from gymnasium import spaces

    boxes: dict[str, spaces.Space] = {
        name: spaces.Box(-np.inf, np.inf, shape=env.observation_shapes[name], dtype=np.float32)
        for name in names
    }
    return spaces.Dict(boxes) if as_dict else boxes[names[0]]


def single_action_space(env: VecEnv, action_bound: float | None) -> spaces.Box:
    """Box(-action_bound, action_bound, (num_actions,), float32); unbounded when action_bound is None."""
    from gymnasium import spaces

    if action_bound is not None and not action_bound > 0:
        raise ConfigError(f"action_bound: must be > 0 or None, got {action_bound}")
    bound = np.inf if action_bound is None else float(action_bound)
    return spaces.Box(-bound, bound, shape=(env.num_actions,), dtype=np.float32)


def actions_to_env(actions: Any, env: VecEnv, action_bound: float | None) -> torch.Tensor:
    """(num_envs, num_actions) float32 on env.device, clipped to ±action_bound (a numpy array on the
    CPU is wrapped without a copy; clipping makes a new tensor, so the caller's array is never written).
    """
    tensor = torch.as_tensor(actions, dtype=torch.float32, device=env.device)
    if action_bound is not None:
        tensor = tensor.clamp(-action_bound, action_bound)
    return tensor


def select(
    obs: Observations, names: tuple[str, ...], as_dict: bool
) -> torch.Tensor | dict[str, torch.Tensor]:
    """The exposed groups of a Canter observation dict: one tensor, or a dict of tensors."""
    return {name: obs[name] for name in names} if as_dict else obs[names[0]]


def to_numpy(tensor: torch.Tensor, copy: bool = True) -> np.ndarray:
    """Host copy of a tensor (the one device->host transfer of the classic numpy pipeline).

    copy=False on a CPU tensor returns a view that shares memory with the env's tensor.
    """
    return tensor.detach().to("cpu", copy=copy).numpy()


def tree_map(fn: Any, obs: Any) -> Any:
    """Apply fn to one array/tensor or to every value of a dict of them."""
    return {key: fn(value) for key, value in obs.items()} if isinstance(obs, dict) else fn(obs)


def row(obs: Any, index: int) -> Any:
    """An owned copy of env `index`'s observation (an array/tensor row, or a dict of rows)."""

    def take(batch: Any) -> Any:
        item = batch[index]
        return item.clone() if isinstance(item, torch.Tensor) else item.copy()

    return tree_map(take, obs)


def reseed(env: VecEnv, seed: int) -> None:
    """Reseed the env's one torch.Generator (ManagerBasedRLEnv.generator) so the next reset is reproducible.

    The Canter VecEnv protocol has no seed method: the seed comes from the env config. The adapters
    reseed the generator that every random draw of ManagerBasedRLEnv (reset events, noise) uses.
    """
    generator = getattr(env, "generator", None)
    if not isinstance(generator, torch.Generator):
        raise CanterError(
            f"{type(env).__name__} has no torch.Generator `generator` to reseed; set the seed in its config"
        )
    generator.manual_seed(int(seed))
