"""The generated heightfields of the shipped terrain configs, pinned bit for bit: a refactor of the
configs or the generator must not move a single height (digests taken before the TerrainCfg split;
retaken when stepping stones got their gap-free entry rows, and when their widths came to be measured
on the collision surface)."""

from __future__ import annotations

import hashlib

import pytest

from canter.terrains import (
    SUB_TERRAIN_TYPES,
    TerrainCfg,
    generate_terrain,
    rough_terrain_cfg,
    stepping_stones_terrain_cfg,
    stone_rows_terrain_cfg,
    sub_terrain_mix,
)

DIGESTS = {
    "rough": ("8b5c3904f3407d30a15741e55e2d12fda092af0d3442a49ac39b31a56b2e285f", (880, 1680)),
    "stone_rows": ("7f05996d387deab158e310b98df1e68da2f242c629ea19bbf3358e177fda8781", (1280, 480)),
    "stepping_stones": ("421480431c30f5643b757922a4c49f96dd2fb58c5daa72e2e6cb1b52823c7b88", (880, 880)),
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


def test_random_layout_of_every_type_generates_the_same_bits():
    """curriculum=False: types and difficulties drawn per block, every standard type present."""
    cfg = TerrainCfg(
        num_rows=3, num_cols=9, size=(4.0, 4.0), border_width=1.0, curriculum=False, seed=7,
        sub_terrains=sub_terrain_mix(**dict.fromkeys(SUB_TERRAIN_TYPES, 1.0)),
    )
    terrain_map = generate_terrain(cfg)
    assert terrain_map.names == SUB_TERRAIN_TYPES
    digest = hashlib.sha256(terrain_map.heights.tobytes()).hexdigest()
    assert digest == "61c238c10408481266569679d4ca7f98d892ccecdb6bc4a8e3325617491a3c2e"
    types = hashlib.sha256(terrain_map.types.astype("int64").tobytes()).hexdigest()
    assert types == "acd0894de25aa8c5460c0af9196f8f45f38c4ed7289a00826f7f0de18fe385c0"
