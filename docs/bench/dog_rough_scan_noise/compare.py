"""BENCHMARKS §6: the mean terrain level of commands.sh's terrain hour (height-scan noise ±0.05 m) against
../dog_rough_open's hour and ../dog_rough_seed1's (the defaults, ±0.1 m, seeds 0 and 1), all from the same 5-minute
flat run, at equal env steps and equal minutes on the terrain. Writes level_vs_steps.png beside this file.
Usage: python compare.py"""
import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent / "dog_rough_steps12"))
from compare import compare  # noqa: E402

compare([("scan noise ±0.1 m, seed 0 (dog_rough_open)", HERE.parent / "dog_rough_open" / "terrain_levels.json", 24),
         ("scan noise ±0.1 m, seed 1 (dog_rough_seed1)", HERE.parent / "dog_rough_seed1" / "terrain_levels.json", 24),
         ("scan noise ±0.05 m, seed 0", HERE / "terrain_levels.json", 24)],
        HERE / "level_vs_steps.png", [3.0 * k for k in range(1, 10)], minute_marks=[5.0 * k for k in range(1, 12)])
