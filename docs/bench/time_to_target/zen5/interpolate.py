"""BENCHMARKS §21: when each run's worse tracking error crossed 0.15 m/s, interpolated linearly
between the two marks around the first mark at or under it (the bench's own rule is the mark itself).
`crossing` is also used by ../envs512/table.py."""
import json
import statistics
from pathlib import Path

HERE = Path(__file__).parent
TARGET = 0.15


def worse(mark: dict) -> float:
    """The larger of a mark's forward and lateral tracking errors, m/s."""
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


def main() -> None:
    for variant in ("fp32", "bf16"):
        runs = []
        for seed in range(4):
            path = HERE / f"{variant}_s{seed}.json"
            run = crossing(json.loads(path.read_text())["marks"])
            if run is None:
                raise SystemExit(f"{path.name}: never reached {TARGET}")
            runs.append(run)
        for seed, (minutes, steps) in enumerate(runs):
            print(f"{variant} seed {seed}: {minutes:.2f} min, {steps:.2f} M steps")
        times, steps = [r[0] for r in runs], [r[1] for r in runs]
        print(f"{variant}: mean {statistics.mean(times):.2f} min (median {statistics.median(times):.2f}), "
              f"mean {statistics.mean(steps):.2f} M steps")


if __name__ == "__main__":
    main()
