"""BENCHMARKS §15: dog-flat with 8-step rollouts at desired_kl 0.02 against the default's 12 (../kl04's kl02 runs of
the same seeds, the hour before) and against 8 steps at 0.01 (../steps8). Reads DIR/steps8kl02_s{S}.json (DIR: this
folder by default; commands.sh writes ttt_steps8kl02_s{S}/time_to_target.json, copied here)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent / "envs512"))
from table import report  # the envs512 comparison's table, shared

HERE = Path(__file__).parent

report(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE, [("8 steps, desired_kl 0.02", "steps8kl02")], equal_steps=2.5)
report(HERE.parent / "kl04", [("12 steps, desired_kl 0.02 (the default), the hour before", "kl02")], equal_steps=2.5)
report(HERE.parent / "steps8", [("8 steps, desired_kl 0.01", "steps8")], equal_steps=2.5)
