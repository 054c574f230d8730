"""BENCHMARKS §15: 1,024 envs with 12-step rollouts against 512 envs with 24 (the table of
../envs512/table.py, with the worse error at 2.5 M env steps), and this session's default runs
(1,024 x 24, ../minibatch8/mb4_*) beside them. Reads DIR/{steps12,envs512}_s{S}.json (DIR: this folder by
default; commands.sh writes ttt_{variant}_s{S}/time_to_target.json, copied here)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent / "envs512"))
from table import report  # the envs512 comparison's table, shared

HERE = Path(__file__).parent
DIR = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE

report(DIR, [("1,024 envs x 12 steps", "steps12"), ("512 envs x 24 steps", "envs512")], equal_steps=2.5)
report(HERE.parent / "minibatch8", [("1,024 envs x 24 steps (the default; minibatch8/mb4)", "mb4")], equal_steps=2.5)
