"""The stone_rows sub-terrain: stones spanning the width, gaps that open with difficulty, heights
within the spread, a solid platform at the centre; and its course configuration."""

from __future__ import annotations

import itertools

import numpy as np

from canter.terrains import Block, StoneRowsCfg, generate_terrain, stone_rows_terrain_cfg

N = 120  # 6 m at 5 cm


BLOCK = Block(nx=N, ny=40, h=0.05, platform_width=1.0)


def _cfg() -> StoneRowsCfg:
    return StoneRowsCfg(width_range=(0.5, 0.3), gap_range=(0.0, 0.25), height_range=(0.0, 0.05), pit_depth=0.5)


def test_easy_rows_are_flat_and_hard_rows_have_gaps_and_heights():
    cfg = _cfg()
    easy = cfg.heights(np.random.default_rng(0), 0.0, BLOCK)
    hard = cfg.heights(np.random.default_rng(0), 1.0, BLOCK)
    np.testing.assert_array_equal(easy, 0.0)  # no gap rounds to a cell, no height spread
    assert np.all(hard == hard[:, :1])  # every stone spans the whole width
    line = hard[:, 0]
    pits = line == -0.5
    assert pits.any() and np.all(np.abs(line[~pits]) <= 0.05)
    # stones 0.3 m = 6 cells long (the run holding the centre platform aside), gaps U(0.125, 0.25) m
    # = 2..5 cells; the first and last runs are cut by the sub-terrain's edges
    edges = np.flatnonzero(np.diff(pits.astype(int))) + 1
    runs = list(itertools.pairwise(edges))
    stones = [stop - start for start, stop in runs if not pits[start] and not start <= N // 2 < stop]
    gaps = [stop - start for start, stop in runs if pits[start]]
    assert stones and set(stones) == {6}
    assert min(gaps) >= 2 and max(gaps) <= 5
    centre = np.abs(np.arange(N) - (N - 1) / 2) * 0.05 <= 0.5
    np.testing.assert_array_equal(hard[centre], 0.0)


def test_course_config_lays_out_flat_and_stone_columns():
    cfg = stone_rows_terrain_cfg()
    terrain = generate_terrain(cfg)
    names = [terrain.names[t] for t in terrain.types[0]]
    assert names == ["flat"] * 2 + ["stone_rows"] * 8
    assert terrain.heights.shape == (2 * 40 + 10 * N, 2 * 40 + 10 * 40)
