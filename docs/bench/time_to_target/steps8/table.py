"""BENCHMARKS §15: 1,024 envs with 8-step rollouts against the dog-flat default of 12 (the table of
../envs512/table.py, with the worse error at 2.5 M env steps). Reads DIR/{steps8,steps12}_s{S}.json (DIR: this
folder by default; commands.sh writes ttt_{variant}_s{S}/time_to_target.json, copied here)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent / "envs512"))
from table import report  # the envs512 comparison's table, shared

DIR = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent

report(DIR, [("1,024 envs x 8 steps", "steps8"), ("1,024 envs x 12 steps (the default)", "steps12")], equal_steps=2.5)
