"""Terrain configuration: the sub-terrain grid, its heightfield resolution and per-type parameters.

Parameters named `*_range` that depend on difficulty hold (value at difficulty 0, value at
difficulty 1); a sub-terrain of difficulty d uses lo + d * (hi - lo). Units are metres unless noted.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

from canter.core.errors import ConfigError

# column order of the types when proportions are laid out over the columns
SUB_TERRAIN_TYPES: tuple[str, ...] = (
    "flat",
    "rough",
    "slope_up",
    "slope_down",
    "stairs_up",
    "stairs_down",
    "obstacles",
    "stepping_stones",
    "stone_rows",
)


def _default_proportions() -> dict[str, float]:
    return {
        "flat": 0.1,
        "rough": 0.1,
        "slope_up": 0.1,
        "slope_down": 0.1,
        "stairs_up": 0.15,
        "stairs_down": 0.15,
        "obstacles": 0.15,
        "stepping_stones": 0.15,
    }


@dataclass(kw_only=True)
class TerrainCfg:
    """The ground robots walk on.

    kind: "generator" builds one MuJoCo heightfield covering a num_rows x num_cols grid of
        sub-terrains (rows: difficulty 0..1 increasing with the row; columns: terrain type, laid out
        by `proportions`) plus a flat border; "plane" keeps the model's flat floor (no heightfield,
        every origin at 0) so flat tasks pay nothing.
    size: (x, y) extent of one sub-terrain; horizontal_scale: metres between heightfield points.
    vertical_range: (low, high) every height is clipped to, m; low <= 0 <= high.
    base_thickness: depth of the solid slab under the heightfield's lowest point (MuJoCo size[3]).
    border_width: flat ring at height 0 around the grid.
    proportions: relative share of the columns per type (see SUB_TERRAIN_TYPES); zero to omit a type.
    platform_width: flat square at the centre of pyramids, obstacles and stepping stones (the spawn).
    curriculum: True: rows ordered by difficulty, columns by type, envs start at random levels in
        [0, max_init_level]. False: each sub-terrain gets a random type (by proportions) and a random
        difficulty, and envs start on any row.
    friction: (sliding, torsional, rolling) of the ground geom.
    """

    kind: Literal["generator", "plane"] = "generator"
    size: tuple[float, float] = (8.0, 8.0)
    num_rows: int = 10
    num_cols: int = 20
    horizontal_scale: float = 0.1
    vertical_range: tuple[float, float] = (-2.0, 2.0)
    base_thickness: float = 1.0
    border_width: float = 4.0
    proportions: dict[str, float] = field(default_factory=_default_proportions)
    platform_width: float = 2.0
    # rough: uniform noise U(-a, a) on a coarse grid of `rough_noise_step`, bilinearly upsampled
    rough_amplitude_range: tuple[float, float] = (0.01, 0.06)
    rough_noise_step: float = 0.2
    # pyramid slopes: rise over run (tan of the slope angle)
    slope_range: tuple[float, float] = (0.0, 0.4)
    # pyramid stairs
    stair_height_range: tuple[float, float] = (0.05, 0.18)
    stair_width: float = 0.3
    # discrete obstacles: boxes of height +-U(h/2, h), widths U(obstacle_width_range) (not difficulty)
    obstacle_height_range: tuple[float, float] = (0.05, 0.20)
    obstacle_width_range: tuple[float, float] = (0.4, 1.6)
    num_obstacles: int = 20
    # stepping stones: stone width, gap U(g/2, g) and height U(-s, s) per stone; pits in between
    # (stone_rows: the same parameters, each stone a row across the whole sub-terrain width)
    stone_width_range: tuple[float, float] = (0.8, 0.4)
    stone_gap_range: tuple[float, float] = (0.1, 0.4)
    stone_height_range: tuple[float, float] = (0.0, 0.1)
    stone_pit_depth: float = 1.0
    friction: tuple[float, float, float] = (1.0, 0.005, 0.0001)
    seed: int = 0
    curriculum: bool = True
    max_init_level: int = 5

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Raise ConfigError naming the first field that cannot work."""
        if self.kind not in ("generator", "plane"):
            raise ConfigError(f"terrain.kind: {self.kind!r} is not one of 'generator', 'plane'")
        _positive("horizontal_scale", self.horizontal_scale)
        if len(self.size) != 2 or not all(s > 0 for s in self.size):
            raise ConfigError(f"terrain.size: need two lengths > 0, got {self.size}")
        if min(self.size) < 4 * self.horizontal_scale:
            raise ConfigError(
                f"terrain.size: a sub-terrain needs >= 4 heightfield cells per side, got {self.size} "
                f"at horizontal_scale {self.horizontal_scale}"
            )
        for name in ("num_rows", "num_cols"):
            if getattr(self, name) < 1:
                raise ConfigError(f"terrain.{name}: must be >= 1, got {getattr(self, name)}")
        low, high = self.vertical_range
        if not low <= 0.0 <= high or not low < high:
            raise ConfigError(
                f"terrain.vertical_range: need low <= 0 <= high, low < high, got {self.vertical_range}"
            )
        _positive("base_thickness", self.base_thickness)
        if self.border_width < 0:
            raise ConfigError(f"terrain.border_width: must be >= 0, got {self.border_width}")
        unknown = sorted(set(self.proportions) - set(SUB_TERRAIN_TYPES))
        if unknown:
            raise ConfigError(
                f"terrain.proportions: unknown type(s) {', '.join(unknown)} (have: {', '.join(SUB_TERRAIN_TYPES)})"
            )
        if any(not v >= 0 for v in self.proportions.values()) or not sum(self.proportions.values()) > 0:
            raise ConfigError(
                f"terrain.proportions: need values >= 0 with a positive sum, got {self.proportions}"
            )
        if not 0 <= self.platform_width <= min(self.size):
            raise ConfigError(
                f"terrain.platform_width: must be in [0, {min(self.size)}], got {self.platform_width}"
            )
        for name in (
            "rough_amplitude_range",
            "slope_range",
            "stair_height_range",
            "obstacle_height_range",
            "stone_gap_range",
            "stone_height_range",
        ):
            _non_negative_pair(name, getattr(self, name))
        for name in ("obstacle_width_range", "stone_width_range"):
            _non_negative_pair(name, getattr(self, name))
            if min(getattr(self, name)) < self.horizontal_scale:
                raise ConfigError(f"terrain.{name}: must be >= horizontal_scale, got {getattr(self, name)}")
        if self.obstacle_width_range[0] > self.obstacle_width_range[1]:
            raise ConfigError(
                f"terrain.obstacle_width_range: need low <= high, got {self.obstacle_width_range}"
            )
        _positive("rough_noise_step", self.rough_noise_step)
        if self.stair_width < self.horizontal_scale:
            raise ConfigError(f"terrain.stair_width: must be >= horizontal_scale, got {self.stair_width}")
        if self.num_obstacles < 0:
            raise ConfigError(f"terrain.num_obstacles: must be >= 0, got {self.num_obstacles}")
        _positive("stone_pit_depth", self.stone_pit_depth)
        if len(self.friction) != 3 or not all(f >= 0 for f in self.friction) or not self.friction[0] > 0:
            raise ConfigError(
                f"terrain.friction: need (sliding > 0, torsional >= 0, rolling >= 0), got {self.friction}"
            )
        if self.max_init_level < 0:
            raise ConfigError(f"terrain.max_init_level: must be >= 0, got {self.max_init_level}")


def _positive(name: str, value: float) -> None:
    if not (value > 0 and math.isfinite(value)):
        raise ConfigError(f"terrain.{name}: must be > 0, got {value}")


def _non_negative_pair(name: str, value: tuple[float, float]) -> None:
    if len(value) != 2 or not all(v >= 0 and math.isfinite(v) for v in value):
        raise ConfigError(f"terrain.{name}: need two values >= 0, got {value}")


def flat_terrain_cfg() -> TerrainCfg:
    """The model's flat floor: no heightfield, all origins at the world origin."""
    return TerrainCfg(kind="plane", num_rows=1, num_cols=1)


def rough_terrain_cfg() -> TerrainCfg:
    """The full mix of sub-terrains on a 10 x 20 grid of 8 m squares at 0.1 m resolution."""
    return TerrainCfg()


def stone_rows_terrain_cfg() -> TerrainCfg:
    """A stepping-stone course for the dog along +x: flat columns and rows of stones (2 of 10 columns
    flat), 6 m x 2 m sub-terrains at 5 cm resolution; from no gaps and level stones (row 0) to 0.3 m
    stones, gaps up to 0.25 m and heights within +-5 cm (last row)."""
    return TerrainCfg(
        proportions={"flat": 0.2, "stone_rows": 0.8},
        size=(6.0, 2.0),
        num_rows=10,
        num_cols=10,
        horizontal_scale=0.05,
        border_width=2.0,
        platform_width=1.0,
        stone_width_range=(0.5, 0.3),
        stone_gap_range=(0.0, 0.25),
        stone_height_range=(0.0, 0.05),
        stone_pit_depth=0.5,
        max_init_level=3,
    )


def stepping_stones_terrain_cfg() -> TerrainCfg:
    """Stepping stones only (every column), rows from wide stones with narrow gaps to the reverse."""
    return TerrainCfg(proportions={"stepping_stones": 1.0}, num_cols=10)
