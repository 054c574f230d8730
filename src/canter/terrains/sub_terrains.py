"""Sub-terrain height functions: `(rng, difficulty, cfg, nx, ny) -> heights (nx, ny)` in metres.

Heights are sampled at heightfield points: point (i, j) lies at (i * h, j * h) from the sub-terrain's
first corner, h = cfg.horizontal_scale, so the centre is at ((nx - 1) h / 2, (ny - 1) h / 2). Axis 0
is x, axis 1 is y. All randomness comes from the numpy Generator passed in.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from canter.terrains.config import TerrainCfg

SubTerrainFn = Callable[[np.random.Generator, float, TerrainCfg, int, int], np.ndarray]

# guards floor() against 0.3 / 0.1 = 2.9999999999999996
_EPS = 1e-6


def lerp(bounds: tuple[float, float], difficulty: float) -> float:
    """The parameter value at `difficulty`: lo + d * (hi - lo)."""
    return bounds[0] + difficulty * (bounds[1] - bounds[0])


def edge_distance(nx: int, ny: int, h: float) -> np.ndarray:
    """(nx, ny) distance of each point from the nearest sub-terrain edge, m (0 on the edge)."""
    i = np.minimum(np.arange(nx), np.arange(nx)[::-1])
    j = np.minimum(np.arange(ny), np.arange(ny)[::-1])
    return np.minimum(i[:, None], j[None, :]) * h


def platform_mask(nx: int, ny: int, h: float, width: float) -> np.ndarray:
    """(nx, ny) bool: points within the centred square of side `width`."""
    dx = np.abs(np.arange(nx) - (nx - 1) / 2.0) * h
    dy = np.abs(np.arange(ny) - (ny - 1) / 2.0) * h
    return (dx[:, None] <= width / 2.0 + _EPS) & (dy[None, :] <= width / 2.0 + _EPS)


def _pyramid_cap(nx: int, ny: int, h: float, platform_width: float) -> float:
    """Edge distance at which the centre platform starts, m."""
    return max((min(nx, ny) - 1) / 2.0 * h - platform_width / 2.0, 0.0)


def flat(rng: np.random.Generator, difficulty: float, cfg: TerrainCfg, nx: int, ny: int) -> np.ndarray:
    return np.zeros((nx, ny))


def rough(rng: np.random.Generator, difficulty: float, cfg: TerrainCfg, nx: int, ny: int) -> np.ndarray:
    """Uniform noise U(-a, a) drawn on a coarse grid of spacing cfg.rough_noise_step and bilinearly
    upsampled to the points, a = lerp(rough_amplitude_range)."""
    amplitude = lerp(cfg.rough_amplitude_range, difficulty)
    h, step = cfg.horizontal_scale, cfg.rough_noise_step
    coarse_x = int(np.ceil((nx - 1) * h / step)) + 1
    coarse_y = int(np.ceil((ny - 1) * h / step)) + 1
    noise = rng.uniform(-amplitude, amplitude, size=(coarse_x, coarse_y))
    wx = _interp_matrix(np.arange(nx) * h, np.arange(coarse_x) * step)
    wy = _interp_matrix(np.arange(ny) * h, np.arange(coarse_y) * step)
    return wx @ noise @ wy.T


def _interp_matrix(fine: np.ndarray, coarse: np.ndarray) -> np.ndarray:
    """(len(fine), len(coarse)) weights of linear interpolation from coarse to fine positions."""
    return np.stack([np.interp(fine, coarse, unit) for unit in np.eye(coarse.size)], axis=1)


def slope_up(rng: np.random.Generator, difficulty: float, cfg: TerrainCfg, nx: int, ny: int) -> np.ndarray:
    """A pyramid rising from 0 at the edges with slope s = lerp(slope_range) to a flat top platform:
    height = s * min(edge distance, edge distance of the platform)."""
    h = cfg.horizontal_scale
    cap = _pyramid_cap(nx, ny, h, cfg.platform_width)
    return lerp(cfg.slope_range, difficulty) * np.minimum(edge_distance(nx, ny, h), cap)


def slope_down(rng: np.random.Generator, difficulty: float, cfg: TerrainCfg, nx: int, ny: int) -> np.ndarray:
    """The inverted pyramid: a pit whose floor is the centre platform."""
    return -slope_up(rng, difficulty, cfg, nx, ny)


def stairs_up(rng: np.random.Generator, difficulty: float, cfg: TerrainCfg, nx: int, ny: int) -> np.ndarray:
    """Square rings of width cfg.stair_width, each one step of lerp(stair_height_range) higher than
    the ring outside it: height = step * min(floor(edge distance / width), top level)."""
    h, width = cfg.horizontal_scale, cfg.stair_width
    step = lerp(cfg.stair_height_range, difficulty)
    top = np.floor(_pyramid_cap(nx, ny, h, cfg.platform_width) / width + _EPS)
    level = np.floor(edge_distance(nx, ny, h) / width + _EPS)
    return step * np.minimum(level, top)


def stairs_down(rng: np.random.Generator, difficulty: float, cfg: TerrainCfg, nx: int, ny: int) -> np.ndarray:
    """Stairs down into a pit whose floor is the centre platform."""
    return -stairs_up(rng, difficulty, cfg, nx, ny)


def obstacles(rng: np.random.Generator, difficulty: float, cfg: TerrainCfg, nx: int, ny: int) -> np.ndarray:
    """cfg.num_obstacles boxes (later ones overwrite earlier ones) of widths U(obstacle_width_range)
    and heights +-U(H/2, H), H = lerp(obstacle_height_range), on flat ground; the platform is clear."""
    h = cfg.horizontal_scale
    top = lerp(cfg.obstacle_height_range, difficulty)
    count = cfg.num_obstacles
    widths = np.maximum(np.rint(rng.uniform(*cfg.obstacle_width_range, size=(count, 2)) / h), 1).astype(int)
    corners = rng.uniform(0.0, 1.0, size=(count, 2))
    magnitudes = rng.uniform(top / 2.0, top, size=count)
    signs = rng.choice(np.array([-1.0, 1.0]), size=count)
    heights = np.zeros((nx, ny))
    for k in range(count):
        wx, wy = min(widths[k, 0], nx), min(widths[k, 1], ny)
        x0 = int(corners[k, 0] * (nx - wx + 1))
        y0 = int(corners[k, 1] * (ny - wy + 1))
        heights[x0 : x0 + wx, y0 : y0 + wy] = signs[k] * magnitudes[k]
    heights[platform_mask(nx, ny, h, cfg.platform_width)] = 0.0
    return heights


def _stone_index(rng: np.random.Generator, n: int, h: float, width: float, gap: float) -> np.ndarray:
    """(n,) index of the stone each point along one axis lies on, -1 in a gap. Stones are `width`
    wide, gaps U(gap/2, gap), both at least one cell."""
    index = np.full(n, -1)
    width_cells = max(round(width / h), 1)
    position = stone = 0
    while position < n:
        index[position : position + width_cells] = stone
        gap_cells = max(round(rng.uniform(gap / 2.0, gap) / h), 1)
        position += width_cells + gap_cells
        stone += 1
    return index


def stepping_stones(
    rng: np.random.Generator, difficulty: float, cfg: TerrainCfg, nx: int, ny: int
) -> np.ndarray:
    """A grid of square-ish stones with random gaps (rows and columns of stones separated by
    U(g/2, g)) and heights U(-s, s) per stone; everything between stones is a pit of depth
    cfg.stone_pit_depth; the centre platform is solid at 0."""
    h = cfg.horizontal_scale
    width = lerp(cfg.stone_width_range, difficulty)
    gap = lerp(cfg.stone_gap_range, difficulty)
    spread = lerp(cfg.stone_height_range, difficulty)
    ix = _stone_index(rng, nx, h, width, gap)
    iy = _stone_index(rng, ny, h, width, gap)
    stone_heights = rng.uniform(-spread, spread, size=(ix.max() + 1, iy.max() + 1))
    on_stone = (ix[:, None] >= 0) & (iy[None, :] >= 0)
    heights = np.where(on_stone, stone_heights[ix[:, None], iy[None, :]], -cfg.stone_pit_depth)
    heights[platform_mask(nx, ny, h, cfg.platform_width)] = 0.0
    return heights


def stone_rows(rng: np.random.Generator, difficulty: float, cfg: TerrainCfg, nx: int, ny: int) -> np.ndarray:
    """Stepping stones in a row along x, each spanning the whole width (y): stones lerp(stone_width_range)
    long, gaps U(g/2, g) rounded to whole cells (so a small g gives no gap at all), heights U(-s, s)
    per stone; pits of depth cfg.stone_pit_depth in the gaps; a band of platform_width across the
    centre (the spawn) is solid at 0."""
    h = cfg.horizontal_scale
    width_cells = max(round(lerp(cfg.stone_width_range, difficulty) / h), 1)
    gap = lerp(cfg.stone_gap_range, difficulty)
    spread = lerp(cfg.stone_height_range, difficulty)
    row = np.full(nx, -cfg.stone_pit_depth)
    position = 0
    while position < nx:
        row[position : position + width_cells] = rng.uniform(-spread, spread)
        position += width_cells + round(rng.uniform(gap / 2.0, gap) / h)
    row[np.abs(np.arange(nx) - (nx - 1) / 2.0) * h <= cfg.platform_width / 2.0 + _EPS] = 0.0
    return np.repeat(row[:, None], ny, axis=1)


SUB_TERRAINS: dict[str, SubTerrainFn] = {
    "flat": flat,
    "rough": rough,
    "slope_up": slope_up,
    "slope_down": slope_down,
    "stairs_up": stairs_up,
    "stairs_down": stairs_down,
    "obstacles": obstacles,
    "stepping_stones": stepping_stones,
    "stone_rows": stone_rows,
}
