"""BENCHMARKS §6: the mean terrain level of commands.sh's terrain hour (stepping stones measured on the collision
surface) against ../dog_rough_hour's float32 hour on the old stones, both the defaults from the same 5-minute flat
run, at equal env steps and equal minutes on the terrain. Writes level_vs_steps.png beside this file.
Usage: python compare.py"""
import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent / "dog_rough_steps12"))
from compare import compare  # noqa: E402

compare([("old stones (dog_rough_hour, float32)", HERE.parent / "dog_rough_hour" / "fp32" / "terrain_levels.json", 24),
         ("stones measured on the surface", HERE / "terrain_levels.json", 24)],
        HERE / "level_vs_steps.png", [3.0 * k for k in range(1, 10)], minute_marks=[5.0 * k for k in range(1, 12)])
