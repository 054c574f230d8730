"""BENCHMARKS §15: 1,024 envs with 8 minibatches against the default 4 on dog-flat (the table of
../envs512/table.py, with the worse error at 2.5 M env steps for sample efficiency apart from speed).
Reads DIR/mb{M}_s{S}.json (DIR: this folder by default; commands.sh writes ttt_mb{M}_s{S}/time_to_target.json,
copied here); with ../envs512 it prints the 512-env runs of the same code at equal steps too."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent / "envs512"))
from table import report  # the envs512 comparison's table, shared

HERE = Path(__file__).parent
DIR = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE

report(DIR, [("1,024 envs x 4 minibatches", "mb4"), ("1,024 envs x 8 minibatches", "mb8")], equal_steps=2.5)
report(HERE.parent / "envs512", [("512 envs x 4 minibatches (envs512, the previous session)", "envs512")], equal_steps=2.5)
