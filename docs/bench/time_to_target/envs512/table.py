"""BENCHMARKS §15: 512 envs against the default 1,024 on dog-flat. Prints each run's worse tracking
error (max of forward and lateral, m/s) at every mark, when it crossed 0.15 (the bench's mark rule,
and interpolated linearly between the marks around the first mark at or under it), and the means.
Reads DIR/envs{N}_s{S}.json (DIR: this folder by default; commands.sh writes ttt_envs{N}_s{S}/time_to_target.json, copied here)."""
import json
import statistics
import sys
from pathlib import Path

DIR = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent
TARGET = 0.15
SEEDS = range(4)


def worse(mark: dict) -> float:
    return max(mark["lin_vel_x_abs_error"], mark["lin_vel_y_abs_error"])


def crossing(marks: list[dict]) -> tuple[float, float] | None:
    """(minutes, million env steps) at the interpolated crossing, or None within the budget."""
    previous = None
    for mark in marks:
        if worse(mark) <= TARGET:
            if previous is None:
                return mark["train_wall_s"] / 60, mark["env_steps"] / 1e6
            t0, v0, s0 = previous
            f = (v0 - TARGET) / (v0 - worse(mark))
            return (t0 + f * (mark["train_wall_s"] - t0)) / 60, (s0 + f * (mark["env_steps"] - s0)) / 1e6
        previous = (mark["train_wall_s"], worse(mark), mark["env_steps"])
    return None


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
