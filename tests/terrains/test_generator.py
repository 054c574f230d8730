"""The generated heightfields of the shipped terrain configs, pinned bit for bit: a refactor of the
configs or the generator must not move a single height (digests taken before the TerrainCfg split)."""

from __future__ import annotations

import hashlib

import pytest

from canter.terrains import (
    generate_terrain,
    rough_terrain_cfg,
    stepping_stones_terrain_cfg,
    stone_rows_terrain_cfg,
)

DIGESTS = {
    "rough": ("8f44418a37d69db26a1017201c86b46f3375ccd91481c3cb9cf150730ebbd4c1", (880, 1680)),
    "stone_rows": ("7f05996d387deab158e310b98df1e68da2f242c629ea19bbf3358e177fda8781", (1280, 480)),
    "stepping_stones": ("6ef6eee5f37044409a6a2fda24fcdf80ac63cbb1075648739eaec60916a87685", (880, 880)),
}
FACTORIES = {
    "rough": rough_terrain_cfg,
    "stone_rows": stone_rows_terrain_cfg,
    "stepping_stones": stepping_stones_terrain_cfg,
}


@pytest.mark.parametrize("name", sorted(DIGESTS))
def test_shipped_terrains_generate_the_same_bits(name: str):
    heights = generate_terrain(FACTORIES[name]()).heights
    digest, shape = DIGESTS[name]
    assert heights.shape == shape
    assert hashlib.sha256(heights.tobytes()).hexdigest() == digest
