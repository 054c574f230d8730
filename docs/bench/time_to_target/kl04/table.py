"""BENCHMARKS §15: dog-flat with desired_kl 0.04 against the default 0.02, seeds 0 and 1 in the same hour, and
the default's four seeds of ../kl02 (the table of ../envs512/table.py, with the worse error at 2.5 M env steps).
Reads DIR/kl04_s{S}.json and DIR/kl02_s{S}.json (DIR: this folder by default; commands.sh writes
ttt_{name}_s{S}/time_to_target.json, copied here)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent / "envs512"))
from table import report  # the envs512 comparison's table, shared

HERE = Path(__file__).parent
DIR = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE

report(DIR, [("desired_kl 0.04", "kl04")], equal_steps=2.5)
report(DIR, [("desired_kl 0.02 (the default), the same hour", "kl02")], equal_steps=2.5)
report(HERE.parent / "kl02", [("desired_kl 0.02, the default's four seeds of ../kl02", "kl02")], equal_steps=2.5)
