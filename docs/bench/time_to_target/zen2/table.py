"""BENCHMARKS §15: dog-flat's defaults on a Zen 2 (this folder's zen2_s{S}.json) against the same defaults on a
Zen 4 (../kl02/kl02_s{S}.json): each run's errors at 2-5 minutes, its crossing of 0.15 and the worse error at
2.5 M env steps (the table of ../envs512/table.py); and three epochs instead of five on the Zen 2 (epochs3_s{S}.json)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent / "envs512"))
from table import report  # the envs512 comparison's table, shared

HERE = Path(__file__).parent

DIR = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE
report(DIR, [("defaults, Zen 2", "zen2"), ("3 epochs, Zen 2", "epochs3")], equal_steps=2.5)
report(HERE.parent / "kl02", [("defaults, Zen 4 (2026-12-04)", "kl02")], equal_steps=2.5)
