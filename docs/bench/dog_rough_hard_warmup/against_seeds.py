"""BENCHMARKS §6: the warm-up run of commands.sh against the defaults' two seeds (friction and pushes, a Zen 2), with
the second phase's curve moved on by the warm-up's iterations and minutes, so that steps and minutes count from the
end of the flat warm start, as the seeds' do (the warm-up's own levels are those of the pits and the stones alone and
are not plotted; the tables start at the first mark after the warm-up). Writes shifted_levels.json and
level_vs_steps.png into DIR.
Usage: python against_seeds.py DIR  (DIR as given to commands.sh: levels_warmup/ and levels/ in it)"""
import json
import sys
from pathlib import Path

HERE = Path(__file__).parent
ROLLOUT = 24  # steps per env per iteration, the seeds' and both phases'
sys.path.insert(0, str(HERE.parent / "dog_rough_steps12"))
from compare import compare  # noqa: E402

if len(sys.argv) != 2:
    print((__doc__ or "").splitlines()[-1].strip(), file=sys.stderr)
    sys.exit(2)
run = Path(sys.argv[1])
warmup = json.loads((run / "levels_warmup" / "terrain_levels.json").read_text())
main = json.loads((run / "levels" / "terrain_levels.json").read_text())
curve = main["curve"]
curve["iteration"] = [i + warmup["iteration"] for i in curve["iteration"]]
curve["minutes"] = [m + warmup["wall_time_s"] / 60.0 for m in curve["minutes"]]
shifted = run / "shifted_levels.json"
shifted.write_text(json.dumps(main))
first_million = curve["iteration"][0] * main["num_envs"] * ROLLOUT / 1e6
marks = [1.5 * k for k in range(1, 14) if 1.5 * k >= first_million]
minute_marks = [5.0 * k for k in range(1, 12) if 5.0 * k >= curve["minutes"][0]]
eased = HERE.parent / "dog_rough_dr_eased"
compare([("friction and pushes, seed 0 (dog_rough_dr_eased)", eased / "terrain_levels.json", ROLLOUT),
         ("friction and pushes, seed 1 (dog_rough_dr_eased/seed1)", eased / "seed1" / "terrain_levels.json", ROLLOUT),
         ("15 min on the pits and the stones, then the defaults", shifted, ROLLOUT)],
        run / "level_vs_steps.png", marks, minute_marks=minute_marks)
