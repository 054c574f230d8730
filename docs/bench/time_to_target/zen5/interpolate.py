"""BENCHMARKS §21: when each run's worse tracking error crossed 0.15 m/s, interpolated linearly
between the two marks around the first mark at or under it (the bench's own rule is the mark itself)."""
import json
import statistics
from pathlib import Path

HERE = Path(__file__).parent
TARGET = 0.15


def crossing(path: Path) -> tuple[float, float]:
    """(minutes, million env steps) at the interpolated crossing."""
    previous = None
    for mark in json.loads(path.read_text())["marks"]:
        worse = max(mark["lin_vel_x_abs_error"], mark["lin_vel_y_abs_error"])
        if worse <= TARGET:
            if previous is None:
                return mark["train_wall_s"] / 60, mark["env_steps"] / 1e6
            t0, v0, s0 = previous
            f = (v0 - TARGET) / (v0 - worse)
            return (t0 + f * (mark["train_wall_s"] - t0)) / 60, (s0 + f * (mark["env_steps"] - s0)) / 1e6
        previous = (mark["train_wall_s"], worse, mark["env_steps"])
    raise SystemExit(f"{path.name}: never reached {TARGET}")


for variant in ("fp32", "bf16"):
    runs = [crossing(HERE / f"{variant}_s{seed}.json") for seed in range(4)]
    for seed, (minutes, steps) in enumerate(runs):
        print(f"{variant} seed {seed}: {minutes:.2f} min, {steps:.2f} M steps")
    times, steps = [r[0] for r in runs], [r[1] for r in runs]
    print(f"{variant}: mean {statistics.mean(times):.2f} min (median {statistics.median(times):.2f}), "
          f"mean {statistics.mean(steps):.2f} M steps")
