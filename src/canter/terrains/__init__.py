"""Terrains for legged locomotion: a difficulty x type grid of sub-terrains in one MuJoCo heightfield,
per-env origins, the terrain curriculum, and height queries in torch."""

from canter.terrains.config import (
    SUB_TERRAIN_TYPES,
    TerrainCfg,
    flat_terrain_cfg,
    rough_terrain_cfg,
    stepping_stones_terrain_cfg,
    stone_rows_terrain_cfg,
    sub_terrain_mix,
)
from canter.terrains.generator import TerrainMap, column_types, generate_terrain
from canter.terrains.sub_terrains import (
    Block,
    FlatCfg,
    ObstaclesCfg,
    RoughCfg,
    SlopeCfg,
    StairsCfg,
    SteppingStonesCfg,
    StoneRowsCfg,
    SubTerrainCfg,
)
from canter.terrains.terrain import Terrain

__all__ = [
    "SUB_TERRAIN_TYPES",
    "Block",
    "FlatCfg",
    "ObstaclesCfg",
    "RoughCfg",
    "SlopeCfg",
    "StairsCfg",
    "SteppingStonesCfg",
    "StoneRowsCfg",
    "SubTerrainCfg",
    "Terrain",
    "TerrainCfg",
    "TerrainMap",
    "column_types",
    "flat_terrain_cfg",
    "generate_terrain",
    "rough_terrain_cfg",
    "stepping_stones_terrain_cfg",
    "stone_rows_terrain_cfg",
    "sub_terrain_mix",
]
