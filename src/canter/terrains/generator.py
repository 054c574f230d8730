"""Lay sub-terrains out on a grid and stitch them into one height array.

Layout (x along axis 0, y along axis 1): a flat border of `border_cells` points, then num_rows blocks
along x (row r: difficulty r / (num_rows - 1)) by num_cols blocks along y (column c: one terrain
type), then the border again. Each block is `cells` points per side, so blocks tile at a pitch of
exactly cfg.size. The whole array is centred on the world origin.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from canter.core.validate import validate_tree
from canter.terrains.config import TerrainCfg
from canter.terrains.sub_terrains import Block


@dataclass(frozen=True)
class TerrainMap:
    """A generated terrain.

    heights: (nx, ny) float32, m, height of point (i, j) at world (x0 + i h, y0 + j h).
    names: the sub-terrain names of the config (`TerrainCfg.sub_terrains`), in its order.
    types: (num_rows, num_cols) index into `names` of each block.
    difficulty: (num_rows, num_cols) in [0, 1].
    """

    heights: np.ndarray
    names: tuple[str, ...]
    types: np.ndarray
    difficulty: np.ndarray
    horizontal_scale: float
    border_cells: int
    cells: tuple[int, int]

    @property
    def origin(self) -> tuple[float, float]:
        """World (x, y) of height point (0, 0): the array is centred on the world origin."""
        nx, ny = self.heights.shape
        return (-(nx - 1) / 2.0 * self.horizontal_scale, -(ny - 1) / 2.0 * self.horizontal_scale)

    def block_centers(self) -> np.ndarray:
        """(num_rows, num_cols, 2) world (x, y) of each block's centre."""
        rows, cols = self.types.shape
        h, b = self.horizontal_scale, self.border_cells
        x0, y0 = self.origin
        x = x0 + (b + np.arange(rows) * self.cells[0] + (self.cells[0] - 1) / 2.0) * h
        y = y0 + (b + np.arange(cols) * self.cells[1] + (self.cells[1] - 1) / 2.0) * h
        return np.stack(np.meshgrid(x, y, indexing="ij"), axis=-1)


def _shares(cfg: TerrainCfg) -> np.ndarray:
    return np.array([sub.proportion for sub in cfg.sub_terrains.values()], dtype=np.float64)


def column_types(cfg: TerrainCfg) -> np.ndarray:
    """(num_cols,) index into cfg.sub_terrains of each column (columns_by_proportion of the
    sub-terrains' proportions, in the config's order)."""
    return columns_by_proportion(_shares(cfg), cfg.num_cols)


def columns_by_proportion(proportions: Sequence[float] | np.ndarray, num_cols: int) -> np.ndarray:
    """(num_cols,) index into `proportions` of each column: column c takes the entry whose share of
    the cumulative proportions contains (c + 0.5) / num_cols, so entries get columns in proportion,
    in their order."""
    shares = np.asarray(proportions, dtype=np.float64)
    cumulative = np.cumsum(shares / shares.sum())
    quantiles = (np.arange(num_cols) + 0.5) / num_cols
    index = np.searchsorted(cumulative, quantiles, side="right")
    # float round-off can leave cumulative[-1] a hair below 1: fall back to the last used type
    return np.minimum(index, int(np.flatnonzero(shares > 0)[-1]))


def generate_terrain(cfg: TerrainCfg) -> TerrainMap:
    """Build the height array from np.random.default_rng(cfg.seed); the same cfg gives the same
    bits."""
    validate_tree(cfg)
    rng = np.random.default_rng(cfg.seed)
    h = cfg.horizontal_scale
    cells = (round(cfg.size[0] / h), round(cfg.size[1] / h))
    border = round(cfg.border_width / h)
    rows, cols = cfg.num_rows, cfg.num_cols
    if cfg.curriculum:
        types = np.broadcast_to(column_types(cfg), (rows, cols)).copy()
        difficulty = np.broadcast_to((np.arange(rows) / max(rows - 1, 1))[:, None], (rows, cols)).copy()
    else:
        shares = _shares(cfg)
        types = rng.choice(len(shares), size=(rows, cols), p=shares / shares.sum())
        difficulty = rng.uniform(0.0, 1.0, size=(rows, cols))
    heights = np.zeros((2 * border + rows * cells[0], 2 * border + cols * cells[1]))
    subs = list(cfg.sub_terrains.values())
    block_shape = Block(nx=cells[0], ny=cells[1], h=h, platform_width=cfg.platform_width)
    for r in range(rows):
        for c in range(cols):
            block = subs[types[r, c]].heights(rng, float(difficulty[r, c]), block_shape)
            x, y = border + r * cells[0], border + c * cells[1]
            heights[x : x + cells[0], y : y + cells[1]] = block
    heights = np.clip(heights, *cfg.vertical_range).astype(np.float32)
    return TerrainMap(
        heights=heights,
        names=tuple(cfg.sub_terrains),
        types=types,
        difficulty=difficulty,
        horizontal_scale=h,
        border_cells=border,
        cells=cells,
    )
