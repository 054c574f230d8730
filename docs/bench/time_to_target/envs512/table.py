"""BENCHMARKS §15: 512 envs against the default 1,024 on dog-flat. Prints each run's worse tracking
error (max of forward and lateral, m/s) at 2, 3, 4 and 5 minutes, when it crossed 0.15 (the bench's mark rule,
and interpolated linearly between the marks around the first mark at or under it), and the means.
Reads DIR/envs{N}_s{S}.json (DIR: this folder by default; commands.sh writes ttt_envs{N}_s{S}/time_to_target.json, copied here)."""
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent / "zen5"))
from interpolate import crossing, worse  # the §21 script's crossing rule, shared

DIR = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent
SEEDS = range(4)


for n in (1024, 512):
    at5, steps5, crossed = [], [], []
    for s in SEEDS:
        path = DIR / f"envs{n}_s{s}.json"
        if not path.exists():
            continue
        marks = json.loads(path.read_text())["marks"]
        row = " ".join(f"{m['lin_vel_x_abs_error']:.2f}/{m['lin_vel_y_abs_error']:.2f}" for m in marks[3::2])
        c = crossing(marks)
        at5.append(worse(marks[-1]))
        steps5.append(marks[-1]["env_steps"] / 1e6)
        if c:
            crossed.append(c[0])
        cross = f"{c[0]:.2f} min, {c[1]:.2f} M steps" if c else "not within the budget"
        print(f"{n} envs, seed {s}: vx/vy at 2,3,4,5 min {row}; {steps5[-1]:.2f} M steps; crossed {cross}")
    if at5:
        print(f"{n} envs: worse error at 5 min, mean {statistics.mean(at5):.3f}; steps {statistics.mean(steps5):.2f} M; "
              f"crossed in {len(crossed)} of {len(at5)} runs")
