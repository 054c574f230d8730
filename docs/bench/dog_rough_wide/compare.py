"""BENCHMARKS §6: the mean terrain level of commands.sh's hour with 512-256-128 networks (its own 5-minute flat warm
start) against ../dog_rough_open's and ../dog_rough_seed1's hours (the defaults, 256-128-64, seeds 0 and 1), at equal
env steps and equal minutes on the terrain. Writes level_vs_steps.png beside this file. Usage: python compare.py"""
import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent / "dog_rough_steps12"))
from compare import compare  # noqa: E402

compare([("256-128-64 (the defaults), seed 0 (dog_rough_open)", HERE.parent / "dog_rough_open" / "terrain_levels.json", 24),
         ("256-128-64 (the defaults), seed 1 (dog_rough_seed1)", HERE.parent / "dog_rough_seed1" / "terrain_levels.json", 24),
         ("512-256-128, bf16 update", HERE / "terrain_levels.json", 24)],
        HERE / "level_vs_steps.png", [3.0 * k for k in range(1, 10)], minute_marks=[5.0 * k for k in range(1, 12)])
