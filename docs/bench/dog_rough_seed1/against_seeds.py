"""BENCHMARKS §6: a one-lever terrain hour against the two seeds of the defaults (../dog_rough_open, seed 0, and this
directory, seed 1), all from a 5-minute flat run: the mean level at equal env steps and at equal minutes on the
terrain, and level_vs_steps.png written into the lever's directory.
Usage: python against_seeds.py LEVER_DIR LABEL  (LEVER_DIR holds the lever's terrain_levels.json, 24-step rollouts)"""
import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent / "dog_rough_steps12"))
from compare import compare  # noqa: E402

if len(sys.argv) != 3:
    sys.exit((__doc__ or '').splitlines()[-1].strip())
lever = Path(sys.argv[1])
seeds = [("the defaults, seed 0 (dog_rough_open)", HERE.parent / "dog_rough_open" / "terrain_levels.json", 24),
         ("the defaults, seed 1 (dog_rough_seed1)", HERE / "terrain_levels.json", 24)]
compare([*seeds, (sys.argv[2], lever / "terrain_levels.json", 24)], lever / "level_vs_steps.png",
        [3.0 * k for k in range(1, 10)], minute_marks=[5.0 * k for k in range(1, 12)])
