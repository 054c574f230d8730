"""Terms of the stepping-stone course: progress along +x from the env's origin, reaching the far
side, falling into a gap, and the level curriculum that follows success."""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from canter.core import selection
from canter.core.errors import ConfigError
from canter.scene.entity import Resolved

if TYPE_CHECKING:
    from canter.envs.manager_env import ManagerBasedRLEnv


def _origin(env: ManagerBasedRLEnv) -> torch.Tensor:
    """(num_envs, 3) spawn point of each env's sub-terrain (zeros without a terrain)."""
    if env.terrain is None:
        return torch.zeros(env.num_envs, 3, dtype=env.sim.dtype, device=env.device)
    return env.terrain.env_origins.to(env.sim.dtype)


def progress(env: ManagerBasedRLEnv) -> torch.Tensor:
    """(num_envs,) distance travelled along +x from the env origin, m."""
    return env.scene.root_pos_w[:, 0] - _origin(env)[:, 0]


def forward_velocity(env: ManagerBasedRLEnv, max_velocity: float = 0.6) -> torch.Tensor:
    """Velocity along +x (world), capped at max_velocity, m/s: rewards progress, not sprinting."""
    return env.scene.root_lin_vel_w[:, 0].clamp(max=max_velocity)


def reached_goal(env: ManagerBasedRLEnv, distance: float = 2.6) -> torch.Tensor:
    """The trunk is `distance` m or more past its origin along +x (the far side of the stones)."""
    return progress(env) >= distance


def foot_in_gap(env: ManagerBasedRLEnv, sites: Resolved, depth: float = 0.15) -> torch.Tensor:
    """Any foot site is more than `depth` below the env origin (stones lie within a few cm of it,
    so only a foot in a gap gets there)."""
    foot_z = env.sim.field("site_xpos")[:, sites.ids, 2]
    return (foot_z < (_origin(env)[:, 2:3] - depth)).any(dim=1)


def base_too_low(env: ManagerBasedRLEnv, height: float = 0.12) -> torch.Tensor:
    """The trunk origin is less than `height` above the env origin (collapsed or fallen in)."""
    return env.scene.root_pos_w[:, 2] - _origin(env)[:, 2] < height


def failed(env: ManagerBasedRLEnv, success_term: str = "reached") -> torch.Tensor:
    """1 for envs that ended in a terminal state other than success this step."""
    manager = env.termination_manager
    if success_term not in manager.names:
        raise ConfigError(f"reward failed: no termination term {success_term!r} (have: {', '.join(manager.names)})")
    success = manager.term_dones[manager.names.index(success_term)]
    return (manager.terminated & ~success).float()


def stones_levels(env: ManagerBasedRLEnv, env_ids: torch.Tensor, distance: float = 2.6) -> torch.Tensor:
    """Curriculum, run on the envs about to reset: promote an env that reached the far side, demote
    one that ended less than a third of the way there (first resets, before any step, keep their
    level). Returns the mean level over all envs."""
    terrain = env.terrain
    if terrain is None:
        raise ConfigError("curriculum term stones_levels: the env has no terrain (set EnvCfg.terrain)")
    travelled = selection.take(progress(env), env_ids)
    stepped = selection.take(env.episode_length_buf, env_ids) > 0
    move_up = (travelled >= distance) & stepped
    move_down = (travelled < distance / 3.0) & stepped & ~move_up
    terrain.update_levels(env_ids, move_up, move_down, env.generator)
    return terrain.terrain_levels.float().mean()
