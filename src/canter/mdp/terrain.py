"""Terrain terms: spawning on the terrain, the height scan around the base, the level curriculum.

All of them also work without a terrain (`env.terrain is None`): origins are then the world origin
and the ground is at height 0.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import torch

from canter.core import selection
from canter.core.errors import ConfigError
from canter.core.math import quat_from_yaw, quat_mul, yaw_from_quat
from canter.core.rng import uniform
from canter.managers.term import ManagerTerm, TermCfg
from canter.terrains.terrain import scan_grid

if TYPE_CHECKING:
    from canter.envs.manager_env import ManagerBasedRLEnv

_SCAN_GRID_SIZE = (1.6, 1.0)
_SCAN_RESOLUTION = 0.1


def _ground_height(env: ManagerBasedRLEnv, xy: torch.Tensor) -> torch.Tensor:
    if env.terrain is None:
        return torch.zeros(xy.shape[:-1], dtype=xy.dtype, device=xy.device)
    return env.terrain.height_at(xy)


def reset_root_state_from_terrain(
    env: ManagerBasedRLEnv,
    env_ids: torch.Tensor,
    position_range: tuple[float, float] = (-0.5, 0.5),
    yaw_range: tuple[float, float] = (-math.pi, math.pi),
    velocity_range: tuple[float, float] = (0.0, 0.0),
    height_offset: float = 0.0,
) -> None:
    """Free root at the env's terrain origin: xy = origin xy + U(position_range) per axis,
    z = terrain height at that xy + the default pose's root height + height_offset, heading
    rotated by U(yaw_range) from the default orientation, six velocities U(velocity_range)."""
    n, dtype, device = selection.rows(env_ids), env.sim.dtype, env.device
    default = env.scene.default_qpos[:7]
    if env.terrain is None:
        origin_xy = torch.zeros(n, 2, dtype=dtype, device=device)
    else:
        origin_xy = selection.take(env.terrain.env_origins, env_ids, slice(0, 2)).to(dtype)
    # drawn in float32 and then cast, like every event: the same draws on both backends
    xy = origin_xy + uniform(*position_range, (n, 2), env.generator, device).to(dtype)
    yaw = uniform(*yaw_range, (n,), env.generator, device).to(dtype)
    velocity = uniform(*velocity_range, (n, 6), env.generator, device).to(dtype)
    z = _ground_height(env, xy) + default[2] + height_offset
    selection.put(env.sim.qpos, env_ids, xy, slice(0, 2))
    selection.put(env.sim.qpos, env_ids, z, 2)
    selection.put(env.sim.qpos, env_ids, quat_mul(quat_from_yaw(yaw), default[3:7].expand(n, 4)), slice(3, 7))
    selection.put(env.sim.qvel, env_ids, velocity, slice(0, 6))


class HeightScan(ManagerTerm):
    """(num_envs, num_points) base height above the terrain at a grid of points around the base:
    base_z - terrain_height(p) - offset, clipped to `clip`. The grid (see `scan_grid`) is fixed in the
    base's yaw frame (rotated by heading only, not roll or pitch); heights are interpolated bilinearly
    from the terrain's height grid. Reads only qpos, so both backends agree."""

    def __init__(self, cfg: TermCfg, env: ManagerBasedRLEnv):
        super().__init__(cfg, env)
        grid_size = cfg.params.get("grid_size", _SCAN_GRID_SIZE)
        resolution = cfg.params.get("resolution", _SCAN_RESOLUTION)
        if not resolution > 0 or not all(s >= 0 for s in grid_size):
            raise ConfigError(
                f"HeightScan: need resolution > 0 and grid_size >= 0, got {grid_size}, {resolution}"
            )
        self.points_b = scan_grid(grid_size, resolution).to(device=env.device, dtype=env.sim.dtype)

    def __call__(
        self,
        env: ManagerBasedRLEnv,
        grid_size: tuple[float, float] = _SCAN_GRID_SIZE,
        resolution: float = _SCAN_RESOLUTION,
        offset: float = 0.0,
        clip: tuple[float, float] | None = (-1.0, 1.0),
    ) -> torch.Tensor:
        key = f"height_scan/{grid_size}/{resolution}/{offset}/{clip}"
        # groups asking for the same scan (policy and critic) share one evaluation per step
        return env.scene.cached(key, lambda: self._scan(env, offset, clip))

    def _scan(self, env: ManagerBasedRLEnv, offset: float, clip: tuple[float, float] | None) -> torch.Tensor:
        root_pos = env.scene.root_pos_w
        yaw = yaw_from_quat(env.scene.root_quat_w)
        cos, sin = torch.cos(yaw)[:, None], torch.sin(yaw)[:, None]
        px, py = self.points_b[:, 0], self.points_b[:, 1]
        # p_w = base_xy + R(yaw) p_b
        x = (root_pos[:, 0:1] + cos * px).sub_(sin * py)
        y = (root_pos[:, 1:2] + sin * px).add_(cos * py)
        if env.terrain is None:
            ground = torch.zeros_like(x)
        else:
            ground = env.terrain.height_at_xy(x, y)
        scan = torch.sub(root_pos[:, 2:3], ground, out=ground)
        if offset != 0.0:
            scan.sub_(offset)
        return scan if clip is None else scan.clamp_(clip[0], clip[1])


def terrain_levels(
    env: ManagerBasedRLEnv, env_ids: torch.Tensor, command_name: str = "base_velocity"
) -> torch.Tensor:
    """Game-style terrain curriculum, run on the envs about to reset. With d the distance walked
    from the env origin this episode (root xy - origin xy):
    move up if d > size_x / 2 (the robot walked off its sub-terrain); move down if
    d < 0.5 |commanded xy velocity| episode_length_s and not moving up (only when the command
    `command_name` exists). Envs that have not stepped yet this episode (the first reset) keep their
    level. Returns the mean level over all envs."""
    terrain = env.terrain
    if terrain is None:
        raise ConfigError("curriculum term terrain_levels: the env has no terrain (set EnvCfg.terrain)")
    root_xy = selection.take(env.scene.root_pos_w, env_ids, slice(0, 2))
    origin_xy = selection.take(terrain.env_origins, env_ids, slice(0, 2)).to(root_xy.dtype)
    distance = torch.linalg.vector_norm(root_xy - origin_xy, dim=1)
    stepped = selection.take(env.episode_length_buf, env_ids) > 0
    selection.put(terrain.last_distance, env_ids, distance.to(terrain.last_distance.dtype))
    move_up = (distance > terrain.cfg.size[0] / 2.0) & stepped
    move_down = torch.zeros_like(move_up)
    if command_name in env.command_manager.terms:
        command = selection.take(env.command_manager.get_command(command_name), env_ids, slice(0, 2))
        required = 0.5 * torch.linalg.vector_norm(command, dim=1) * env.max_episode_length_s
        move_down = (distance < required.to(distance.dtype)) & ~move_up & stepped
    terrain.update_levels(env_ids, move_up, move_down, env.generator)
    return terrain.terrain_levels.float().mean()


def walked_out(env: ManagerBasedRLEnv, factor: float = 1.0) -> torch.Tensor:
    """A truncation (mark it time_out=True): the robot has walked farther from its env origin (xy) than
    `factor` x half the sub-terrain's side, i.e. at factor 1 it has earned `terrain_levels`'
    promotion, and the episode is cut there instead of walking on over the neighbouring blocks, so the
    curriculum moves at the robot's pace. factor <= 0: never (the term is off)."""
    terrain = env.terrain
    if terrain is None:
        raise ConfigError("termination term walked_out: the env has no terrain (set EnvCfg.terrain)")
    root_xy = env.scene.root_pos_w[:, 0:2]
    if factor <= 0.0:
        return torch.zeros(root_xy.shape[0], dtype=torch.bool, device=root_xy.device)
    offset = root_xy - terrain.env_origins[:, 0:2].to(root_xy.dtype)
    limit = factor * terrain.cfg.size[0] / 2.0
    return (offset * offset).sum(dim=1) > limit * limit


def terrain_episode_metrics(env: ManagerBasedRLEnv) -> dict[str, torch.Tensor]:
    """Per env, valid for the envs whose episode just ended (read by `canter eval`; needs the
    `terrain_levels` curriculum term, which measures it): the distance walked from the origin, m,
    and whether the robot walked out of its block (1.0), the curriculum's rule for a promotion."""
    terrain = env.terrain
    if terrain is None:
        raise ConfigError("terrain_episode_metrics: the env has no terrain (set EnvCfg.terrain)")
    walked = terrain.last_distance
    return {"distance_walked": walked, "walked_out": (walked > terrain.cfg.size[0] / 2.0).float()}


def terrain_top_share(env: ManagerBasedRLEnv, env_ids: torch.Tensor, fraction: float = 1.0 / 3.0) -> torch.Tensor:
    """A report, not a curriculum: the share of envs whose terrain level lies in the top
    `fraction` of the rows (the top third of 10 rows: levels 7, 8, 9). Logged like the curriculum
    terms; list it after `terrain_levels` so it sees this step's promotions."""
    terrain = env.terrain
    if terrain is None:
        raise ConfigError("curriculum term terrain_top_share: the env has no terrain (set EnvCfg.terrain)")
    first_top_level = terrain.num_rows - max(1, round(fraction * terrain.num_rows))
    return (terrain.terrain_levels >= first_top_level).float().mean()
