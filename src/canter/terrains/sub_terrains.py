"""Sub-terrain types: one typed config per type, each validating its own fields and generating its
heights with `heights(rng, difficulty, block) -> (nx, ny)` in metres.

Heights are sampled at heightfield points: point (i, j) lies at (i * h, j * h) from the block's
first corner, h = block.h, so the centre is at ((nx - 1) h / 2, (ny - 1) h / 2). Axis 0 is x,
axis 1 is y. All randomness comes from the numpy Generator passed in. Parameters named `*_range`
that depend on difficulty hold (value at difficulty 0, value at difficulty 1); a block of difficulty
d uses lo + d * (hi - lo). `proportion` is the type's relative share of the grid's columns.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from canter.core.validate import Validated, fail, require_at_least, require_pair, require_positive

# guards floor() against 0.3 / 0.1 = 2.9999999999999996
_EPS = 1e-6


@dataclass(frozen=True)
class Block:
    """The grid cell a sub-terrain fills: nx x ny points h metres apart, and the side of the flat
    square (or band) at its centre where robots spawn, m."""

    nx: int
    ny: int
    h: float
    platform_width: float


@dataclass(kw_only=True)
class SubTerrainCfg(Validated):
    """Base of the sub-terrain configs. proportion: relative share of the columns (0 omits it)."""

    proportion: float = 1.0

    def validate(self) -> None:
        require_at_least(self, "proportion", 0.0)

    def check_resolution(self, horizontal_scale: float) -> None:
        """Raise a FieldError for a length this type needs that is finer than the heightfield."""

    def heights(self, rng: np.random.Generator, difficulty: float, block: Block) -> np.ndarray:
        """(nx, ny) float64 heights of one block, m."""
        raise NotImplementedError


def lerp(bounds: tuple[float, float], difficulty: float) -> float:
    """The parameter value at `difficulty`: lo + d * (hi - lo)."""
    return bounds[0] + difficulty * (bounds[1] - bounds[0])


def edge_distance(nx: int, ny: int, h: float) -> np.ndarray:
    """(nx, ny) distance of each point from the nearest block edge, m (0 on the edge)."""
    i = np.minimum(np.arange(nx), np.arange(nx)[::-1])
    j = np.minimum(np.arange(ny), np.arange(ny)[::-1])
    return np.minimum(i[:, None], j[None, :]) * h


def platform_mask(nx: int, ny: int, h: float, width: float) -> np.ndarray:
    """(nx, ny) bool: points within the centred square of side `width`."""
    dx = np.abs(np.arange(nx) - (nx - 1) / 2.0) * h
    dy = np.abs(np.arange(ny) - (ny - 1) / 2.0) * h
    return (dx[:, None] <= width / 2.0 + _EPS) & (dy[None, :] <= width / 2.0 + _EPS)


def _pyramid_cap(block: Block) -> float:
    """Edge distance at which the centre platform starts, m."""
    return max((min(block.nx, block.ny) - 1) / 2.0 * block.h - block.platform_width / 2.0, 0.0)


def _require_at_least_cells(cfg: SubTerrainCfg, name: str, horizontal_scale: float) -> None:
    value = getattr(cfg, name)
    if min(value if isinstance(value, tuple) else (value,)) < horizontal_scale:
        raise fail(name, f"must be >= horizontal_scale ({horizontal_scale}), got {value}")


@dataclass(kw_only=True)
class FlatCfg(SubTerrainCfg):
    """Flat ground at height 0."""

    def heights(self, rng: np.random.Generator, difficulty: float, block: Block) -> np.ndarray:
        return np.zeros((block.nx, block.ny))


@dataclass(kw_only=True)
class RoughCfg(SubTerrainCfg):
    """Uniform noise U(-a, a), a = lerp(amplitude_range), drawn on a coarse grid of spacing
    noise_step (m) and bilinearly upsampled to the points."""

    amplitude_range: tuple[float, float] = (0.01, 0.06)
    noise_step: float = 0.2

    def validate(self) -> None:
        super().validate()
        require_pair(self, "amplitude_range", ordered=False, minimum=0.0)
        require_positive(self, "noise_step")

    def heights(self, rng: np.random.Generator, difficulty: float, block: Block) -> np.ndarray:
        amplitude = lerp(self.amplitude_range, difficulty)
        h, step = block.h, self.noise_step
        coarse_x = int(np.ceil((block.nx - 1) * h / step)) + 1
        coarse_y = int(np.ceil((block.ny - 1) * h / step)) + 1
        noise = rng.uniform(-amplitude, amplitude, size=(coarse_x, coarse_y))
        wx = _interp_matrix(np.arange(block.nx) * h, np.arange(coarse_x) * step)
        wy = _interp_matrix(np.arange(block.ny) * h, np.arange(coarse_y) * step)
        return wx @ noise @ wy.T


def _interp_matrix(fine: np.ndarray, coarse: np.ndarray) -> np.ndarray:
    """(len(fine), len(coarse)) weights of linear interpolation from coarse to fine positions."""
    return np.stack([np.interp(fine, coarse, unit) for unit in np.eye(coarse.size)], axis=1)


@dataclass(kw_only=True)
class SlopeCfg(SubTerrainCfg):
    """A pyramid rising from 0 at the edges with slope s = lerp(slope_range) (rise over run) to a
    flat top platform: height = s * min(edge distance, edge distance of the platform). inverted: a
    pit whose floor is the platform instead."""

    slope_range: tuple[float, float] = (0.0, 0.4)
    inverted: bool = False

    def validate(self) -> None:
        super().validate()
        require_pair(self, "slope_range", ordered=False, minimum=0.0)

    def heights(self, rng: np.random.Generator, difficulty: float, block: Block) -> np.ndarray:
        up = lerp(self.slope_range, difficulty) * np.minimum(edge_distance(block.nx, block.ny, block.h), _pyramid_cap(block))
        return -up if self.inverted else up


@dataclass(kw_only=True)
class StairsCfg(SubTerrainCfg):
    """Square rings of width step_width (m), each one step of lerp(step_height_range) higher than
    the ring outside it: height = step * min(floor(edge distance / width), top level). inverted:
    stairs down into a pit whose floor is the platform."""

    step_height_range: tuple[float, float] = (0.05, 0.18)
    step_width: float = 0.3
    inverted: bool = False

    def validate(self) -> None:
        super().validate()
        require_pair(self, "step_height_range", ordered=False, minimum=0.0)
        require_positive(self, "step_width")

    def check_resolution(self, horizontal_scale: float) -> None:
        _require_at_least_cells(self, "step_width", horizontal_scale)

    def heights(self, rng: np.random.Generator, difficulty: float, block: Block) -> np.ndarray:
        step = lerp(self.step_height_range, difficulty)
        top = np.floor(_pyramid_cap(block) / self.step_width + _EPS)
        level = np.floor(edge_distance(block.nx, block.ny, block.h) / self.step_width + _EPS)
        up = step * np.minimum(level, top)
        return -up if self.inverted else up


@dataclass(kw_only=True)
class ObstaclesCfg(SubTerrainCfg):
    """`count` boxes (later ones overwrite earlier ones) of widths U(width_range) (m, not
    difficulty) and heights +-U(H/2, H), H = lerp(height_range), on flat ground; the platform is
    clear."""

    height_range: tuple[float, float] = (0.05, 0.20)
    width_range: tuple[float, float] = (0.4, 1.6)
    count: int = 20

    def validate(self) -> None:
        super().validate()
        require_pair(self, "height_range", ordered=False, minimum=0.0)
        require_pair(self, "width_range", minimum=0.0)
        require_at_least(self, "count", 0, integer=True)

    def check_resolution(self, horizontal_scale: float) -> None:
        _require_at_least_cells(self, "width_range", horizontal_scale)

    def heights(self, rng: np.random.Generator, difficulty: float, block: Block) -> np.ndarray:
        nx, ny, h = block.nx, block.ny, block.h
        top = lerp(self.height_range, difficulty)
        count = self.count
        widths = np.maximum(np.rint(rng.uniform(*self.width_range, size=(count, 2)) / h), 1).astype(int)
        corners = rng.uniform(0.0, 1.0, size=(count, 2))
        magnitudes = rng.uniform(top / 2.0, top, size=count)
        signs = rng.choice(np.array([-1.0, 1.0]), size=count)
        heights = np.zeros((nx, ny))
        for k in range(count):
            wx, wy = min(widths[k, 0], nx), min(widths[k, 1], ny)
            x0 = int(corners[k, 0] * (nx - wx + 1))
            y0 = int(corners[k, 1] * (ny - wy + 1))
            heights[x0 : x0 + wx, y0 : y0 + wy] = signs[k] * magnitudes[k]
        heights[platform_mask(nx, ny, h, block.platform_width)] = 0.0
        return heights


@dataclass(kw_only=True)
class SteppingStonesCfg(SubTerrainCfg):
    """A grid of square-ish stones lerp(width_range) wide (m), rows and columns of stones separated
    by gaps U(g/2, g), g = lerp(gap_range), heights U(-s, s), s = lerp(height_range), per stone;
    everything between stones is a pit pit_depth (m) deep; the centre platform is solid at 0.

    Widths are those of the surface MuJoCo collides with, which interpolates linearly between height
    points: a stone's flat top and a gap's opening at the top are rounded to whole cells (see
    `_stone_index`). So a gap under 1.5 cells is no gap (at 0.1 m, the easiest rows are solid ground:
    the curriculum's entry rung, as in legged_gym), and a one-cell pit is a gap of two cells."""

    width_range: tuple[float, float] = (0.8, 0.4)
    gap_range: tuple[float, float] = (0.0, 0.4)
    height_range: tuple[float, float] = (0.0, 0.1)
    pit_depth: float = 1.0

    def validate(self) -> None:
        super().validate()
        for name in ("width_range", "gap_range", "height_range"):
            require_pair(self, name, ordered=False, minimum=0.0)
        require_positive(self, "pit_depth")

    def check_resolution(self, horizontal_scale: float) -> None:
        _require_at_least_cells(self, "width_range", horizontal_scale)

    def heights(self, rng: np.random.Generator, difficulty: float, block: Block) -> np.ndarray:
        nx, ny, h = block.nx, block.ny, block.h
        width = lerp(self.width_range, difficulty)
        gap = lerp(self.gap_range, difficulty)
        spread = lerp(self.height_range, difficulty)
        ix = _stone_index(rng, nx, h, width, gap)
        iy = _stone_index(rng, ny, h, width, gap)
        stone_heights = rng.uniform(-spread, spread, size=(ix.max() + 1, iy.max() + 1))
        on_stone = (ix[:, None] >= 0) & (iy[None, :] >= 0)
        heights = np.where(on_stone, stone_heights[ix[:, None], iy[None, :]], -self.pit_depth)
        heights[platform_mask(nx, ny, h, block.platform_width)] = 0.0
        return heights


def _stone_index(rng: np.random.Generator, n: int, h: float, width: float, gap: float) -> np.ndarray:
    """(n,) index of the stone each point along one axis lies on, -1 in a gap, with sizes measured on
    the heightfield's surface: it interpolates linearly between points h apart, so m points of one
    stone make a flat top (m - 1) h wide and k pit points between two stones open a trench (k + 1) h
    wide at the top (the slopes either side of each pit point are part of the gap). A stone gets
    round(width / h) + 1 points (its top is `width` to the nearest cell), a gap U(gap/2, gap) gets
    round(u / h) - 1 pit points (its opening is u to the nearest cell; under 1.5 cells, no pit). The
    pitch, stone plus gap, is round(width / h) + round(u / h) cells either way. Counting pit points
    instead made a 0.05-0.09 m gap a 0.2 m trench at 0.1 m resolution."""
    index = np.full(n, -1)
    stone_points = round(width / h) + 1
    position = stone = 0
    while position < n:
        index[position : position + stone_points] = stone
        pit_points = max(round(rng.uniform(gap / 2.0, gap) / h) - 1, 0)
        position += stone_points + pit_points
        stone += 1
    return index


@dataclass(kw_only=True)
class StoneRowsCfg(SteppingStonesCfg):
    """Stepping stones in a row along x, each spanning the whole width (y): stones lerp(width_range)
    long, gaps U(g/2, g) rounded to whole cells (so a small g gives no gap at all), heights U(-s, s)
    per stone; pits pit_depth deep in the gaps; a band of platform_width across the centre (the
    spawn) is solid at 0. Unlike the grid's stones (`_stone_index`), sizes here count height points:
    on the collision surface a gap's opening is one cell wider and a stone's flat top one cell
    narrower than lerp'd (5 cm each at the stones task's 5 cm resolution; its figures were taken so)."""

    def heights(self, rng: np.random.Generator, difficulty: float, block: Block) -> np.ndarray:
        nx, h = block.nx, block.h
        width_cells = max(round(lerp(self.width_range, difficulty) / h), 1)
        gap = lerp(self.gap_range, difficulty)
        spread = lerp(self.height_range, difficulty)
        row = np.full(nx, -self.pit_depth)
        position = 0
        while position < nx:
            row[position : position + width_cells] = rng.uniform(-spread, spread)
            position += width_cells + round(rng.uniform(gap / 2.0, gap) / h)
        row[np.abs(np.arange(nx) - (nx - 1) / 2.0) * h <= block.platform_width / 2.0 + _EPS] = 0.0
        return np.repeat(row[:, None], block.ny, axis=1)
