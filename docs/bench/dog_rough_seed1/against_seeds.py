"""BENCHMARKS §6: a one-lever terrain hour against two seeds of the defaults, all from a 5-minute flat run: the mean
level at equal env steps and at equal minutes on the terrain, and level_vs_steps.png written into the lever's directory.
The seeds are those of seed 004's full randomization (../dog_rough_open, seed 0, and this directory, seed 1; a Zen 4),
or with `eased` those of legged_gym's friction and pushes, dog-rough's default since 30049fd (../dog_rough_dr_eased and
its seed1/; a Zen 2).
Usage: python against_seeds.py LEVER_DIR LABEL [eased]  (LEVER_DIR holds the lever's terrain_levels.json, 24-step rollouts)"""
import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent / "dog_rough_steps12"))
from compare import compare  # noqa: E402

if len(sys.argv) not in (3, 4) or sys.argv[3:] not in ([], ["eased"]):
    print((__doc__ or '').splitlines()[-1].strip(), file=sys.stderr)
    sys.exit(2)
lever = Path(sys.argv[1])
if sys.argv[3:]:
    eased = HERE.parent / "dog_rough_dr_eased"
    seeds = [("friction and pushes, seed 0 (dog_rough_dr_eased)", eased / "terrain_levels.json", 24),
             ("friction and pushes, seed 1 (dog_rough_dr_eased/seed1)", eased / "seed1" / "terrain_levels.json", 24)]
    marks = [1.5 * k for k in range(1, 14)]
else:
    seeds = [("the defaults, seed 0 (dog_rough_open)", HERE.parent / "dog_rough_open" / "terrain_levels.json", 24),
             ("the defaults, seed 1 (dog_rough_seed1)", HERE / "terrain_levels.json", 24)]
    marks = [3.0 * k for k in range(1, 10)]
compare([*seeds, (sys.argv[2], lever / "terrain_levels.json", 24)], lever / "level_vs_steps.png",
        marks, minute_marks=[5.0 * k for k in range(1, 12)])
