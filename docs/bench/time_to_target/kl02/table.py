"""BENCHMARKS §15: dog-flat with desired_kl 0.02 against the default's eight 12-step runs of ../steps12 and
../steps8 (the table of ../envs512/table.py, with the worse error at 2.5 M env steps). Reads DIR/kl02_s{S}.json
(DIR: this folder by default; commands.sh writes ttt_kl02_s{S}/time_to_target.json, copied here)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent / "envs512"))
from table import report  # the envs512 comparison's table, shared

HERE = Path(__file__).parent

report(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE, [("desired_kl 0.02", "kl02")], equal_steps=2.5)
report(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE, [("desired_kl 0.01, the same hour", "kl01")], equal_steps=2.5)
report(HERE.parent / "steps12", [("default, first day", "steps12")], equal_steps=2.5)
report(HERE.parent / "steps8", [("default, second day", "steps12")], equal_steps=2.5)
