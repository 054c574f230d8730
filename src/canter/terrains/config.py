"""Terrain configuration: the sub-terrain grid, its heightfield resolution, and a typed config per
sub-terrain type (canter.terrains.sub_terrains), each validating its own fields. Units are metres.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from canter.core.validate import (
    FieldError,
    Validated,
    fail,
    require_at_least,
    require_choice,
    require_positive,
)
from canter.terrains.sub_terrains import (
    FlatCfg,
    ObstaclesCfg,
    RoughCfg,
    SlopeCfg,
    StairsCfg,
    SteppingStonesCfg,
    StoneRowsCfg,
    SubTerrainCfg,
)

# the standard sub-terrains by name, in the column order `sub_terrain_mix` lays them out in
STANDARD_SUB_TERRAINS: dict[str, Callable[[], SubTerrainCfg]] = {
    "flat": FlatCfg,
    "rough": RoughCfg,
    "slope_up": SlopeCfg,
    "slope_down": lambda: SlopeCfg(inverted=True),
    "stairs_up": StairsCfg,
    "stairs_down": lambda: StairsCfg(inverted=True),
    "obstacles": ObstaclesCfg,
    "stepping_stones": SteppingStonesCfg,
    "stone_rows": StoneRowsCfg,
}
SUB_TERRAIN_TYPES: tuple[str, ...] = tuple(STANDARD_SUB_TERRAINS)


def sub_terrain_mix(**proportions: float) -> dict[str, SubTerrainCfg]:
    """Standard sub-terrains with default parameters and the given proportions, in the order of
    SUB_TERRAIN_TYPES, e.g. `sub_terrain_mix(flat=0.2, stairs_up=0.8)`."""
    unknown = sorted(set(proportions) - set(SUB_TERRAIN_TYPES))
    if unknown:
        raise fail("sub_terrains", f"unknown type(s) {', '.join(unknown)} (have: {', '.join(SUB_TERRAIN_TYPES)})")
    mix: dict[str, SubTerrainCfg] = {}
    for name in SUB_TERRAIN_TYPES:
        if name in proportions:
            mix[name] = dataclasses.replace(STANDARD_SUB_TERRAINS[name](), proportion=proportions[name])
    return mix


def _default_sub_terrains() -> dict[str, SubTerrainCfg]:
    return sub_terrain_mix(
        flat=0.1, rough=0.1, slope_up=0.1, slope_down=0.1,
        stairs_up=0.15, stairs_down=0.15, obstacles=0.15, stepping_stones=0.15,
    )


@dataclass(kw_only=True)
class TerrainCfg(Validated):
    """The ground robots walk on.

    kind: "generator" builds one MuJoCo heightfield covering a num_rows x num_cols grid of
        sub-terrains (rows: difficulty 0..1 increasing with the row; columns: the sub-terrains of
        `sub_terrains`, in its order, by their proportions) plus a flat border; "plane" keeps the
        model's flat floor (no heightfield, every origin at 0) so flat tasks pay nothing.
    size: (x, y) extent of one sub-terrain; horizontal_scale: metres between heightfield points.
    vertical_range: (low, high) every height is clipped to, m; low <= 0 <= high.
    base_thickness: depth of the solid slab under the heightfield's lowest point (MuJoCo size[3]).
    border_width: flat ring at height 0 around the grid.
    sub_terrains: the sub-terrain types by name, each a typed config with its `proportion`.
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
    sub_terrains: dict[str, SubTerrainCfg] = field(default_factory=_default_sub_terrains)
    platform_width: float = 2.0
    friction: tuple[float, float, float] = (1.0, 0.005, 0.0001)
    seed: int = 0
    curriculum: bool = True
    max_init_level: int = 5

    config_name = "terrain"

    def validate(self) -> None:
        """Raise ConfigError naming the first field that cannot work (the sub-terrains check their
        own fields; here, what depends on the grid: lengths finer than horizontal_scale)."""
        require_choice(self, "kind")
        require_positive(self, "horizontal_scale", "base_thickness")
        if len(self.size) != 2 or not all(s > 0 for s in self.size):
            raise fail("size", f"need two lengths > 0, got {self.size}")
        if min(self.size) < 4 * self.horizontal_scale:
            raise fail(
                "size",
                f"a sub-terrain needs >= 4 heightfield cells per side, got {self.size} "
                f"at horizontal_scale {self.horizontal_scale}",
            )
        require_at_least(self, "num_rows", 1, integer=True)
        require_at_least(self, "num_cols", 1, integer=True)
        low, high = self.vertical_range
        if not low <= 0.0 <= high or not low < high:
            raise fail("vertical_range", f"need low <= 0 <= high, low < high, got {self.vertical_range}")
        require_at_least(self, "border_width", 0.0)
        if not self.sub_terrains or not sum(s.proportion for s in self.sub_terrains.values()) > 0:
            raise fail("sub_terrains", "need at least one sub-terrain with a proportion > 0")
        for name, sub in self.sub_terrains.items():
            try:
                sub.check_resolution(self.horizontal_scale)
            except FieldError as err:
                raise err.within(f"sub_terrains.{name}") from None
        if not 0 <= self.platform_width <= min(self.size):
            raise fail("platform_width", f"must be in [0, {min(self.size)}], got {self.platform_width}")
        if len(self.friction) != 3 or not all(f >= 0 for f in self.friction) or not self.friction[0] > 0:
            raise fail("friction", f"need (sliding > 0, torsional >= 0, rolling >= 0), got {self.friction}")
        require_at_least(self, "max_init_level", 0, integer=True)


def flat_terrain_cfg() -> TerrainCfg:
    """The model's flat floor: no heightfield, all origins at the world origin."""
    return TerrainCfg(kind="plane", num_rows=1, num_cols=1)


def rough_terrain_cfg() -> TerrainCfg:
    """The full mix of sub-terrains on a 10 x 20 grid of 8 m squares at 0.1 m resolution.

    0.1 m turns each stair riser into a ramp one cell wide and rounds the stones' gaps to whole cells.
    At 0.05 m (--env.terrain.horizontal-scale 0.05) dog-rough's env step costs 15 % more and its terrain
    run learnt the pits and the stones no better: its policy walks out of the 0.1 m grid as often
    (62 % against 63 %), and on its own terrain stops where the gaps begin (BENCHMARKS.md §6)."""
    return TerrainCfg()


def stone_rows_terrain_cfg() -> TerrainCfg:
    """A stepping-stone course for the dog along +x: flat columns and rows of stones (2 of 10 columns
    flat), 6 m x 2 m sub-terrains at 5 cm resolution; from no gaps and level stones (row 0) to 0.3 m
    stones, gaps up to 0.25 m and heights within +-5 cm (last row)."""
    return TerrainCfg(
        sub_terrains={
            "flat": FlatCfg(proportion=0.2),
            "stone_rows": StoneRowsCfg(
                proportion=0.8, width_range=(0.5, 0.3), gap_range=(0.0, 0.25), height_range=(0.0, 0.05), pit_depth=0.5
            ),
        },
        size=(6.0, 2.0),
        num_rows=10,
        num_cols=10,
        horizontal_scale=0.05,
        border_width=2.0,
        platform_width=1.0,
        max_init_level=3,
    )


def stepping_stones_terrain_cfg() -> TerrainCfg:
    """Stepping stones only (every column), rows from wide stones with narrow gaps to the reverse."""
    return TerrainCfg(sub_terrains=sub_terrain_mix(stepping_stones=1.0), num_cols=10)
