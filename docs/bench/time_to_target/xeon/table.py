"""BENCHMARKS §15: dog-flat's defaults on a 2-core Intel Xeon without bfloat16 (this folder's xeon_s{S}.json)
against the same defaults on the Zen 2 (../zen2/zen2_s{S}.json) and the Zen 4 (../kl02/kl02_s{S}.json): each run's
errors at 2-5 minutes, its crossing of 0.15 and the worse error at 2.5 M env steps (the table of ../envs512/table.py)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent / "envs512"))
from table import report  # the envs512 comparison's table, shared

HERE = Path(__file__).parent

DIR = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE
report(DIR, [("defaults, Xeon", "xeon")], equal_steps=2.5)
report(HERE.parent / "zen2", [("defaults, Zen 2 (2026-12-06)", "zen2")], equal_steps=2.5)
report(HERE.parent / "kl02", [("defaults, Zen 4 (2026-12-04)", "kl02")], equal_steps=2.5)
