"""BENCHMARKS §15: 512 envs against the default 1,024 on dog-flat. Prints each run's worse tracking
error (max of forward and lateral, m/s) at 2, 3, 4 and 5 minutes, when it crossed 0.15 (the bench's mark rule,
and interpolated linearly between the marks around the first mark at or under it), and the means.
Reads DIR/envs{N}_s{S}.json (DIR: this folder by default; commands.sh writes ttt_envs{N}_s{S}/time_to_target.json, copied here).
`report` is also used by ../minibatch8/table.py and ../steps12/table.py."""
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent / "zen5"))
from interpolate import crossing, worse  # the §21 script's crossing rule, shared

SEEDS = range(4)


def at_steps(marks: list[dict], million: float) -> float | None:
    """The worse error interpolated linearly at `million` env steps, or None past the run's last mark."""
    previous = None
    for mark in marks:
        steps = mark["env_steps"] / 1e6
        if steps >= million:
            if previous is None:
                return worse(mark)
            s0, v0 = previous
            return v0 + (million - s0) / (steps - s0) * (worse(mark) - v0)
        previous = (steps, worse(mark))
    return None


def report(directory: Path, variants: list[tuple[str, str]], equal_steps: float | None = None) -> None:
    """One line per run of each (label, file prefix) variant and one of means; with `equal_steps`
    (million env steps), also the worse error there, for sample efficiency apart from speed."""
    for label, prefix in variants:
        at5, steps5, crossed, at_equal = [], [], [], []
        for s in SEEDS:
            path = directory / f"{prefix}_s{s}.json"
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
            equal = ""
            if equal_steps is not None:
                e = at_steps(marks, equal_steps)
                if e is not None:
                    at_equal.append(e)
                    equal = f"; {e:.3f} at {equal_steps:g} M steps"
            print(f"{label}, seed {s}: vx/vy at 2,3,4,5 min {row}; {steps5[-1]:.2f} M steps; crossed {cross}{equal}")
        if at5:
            short = f" ({len(at_equal)} of {len(at5)} runs reached it)" if len(at_equal) < len(at5) else ""
            equal = f"; at {equal_steps:g} M steps {statistics.mean(at_equal):.3f}{short}" if at_equal else ""
            print(f"{label}: worse error at 5 min, mean {statistics.mean(at5):.3f}; steps {statistics.mean(steps5):.2f} M; "
                  f"crossed in {len(crossed)} of {len(at5)} runs{equal}")


if __name__ == "__main__":
    report(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent,
           [(f"{n} envs", f"envs{n}") for n in (1024, 512)])
