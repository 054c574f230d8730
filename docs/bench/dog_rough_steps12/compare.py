"""BENCHMARKS §6: the mean terrain level against env steps on the terrain, for the 12-step terrain hour of
commands.sh and the 24-step one of ../dog_rough_entry (the same recipe on another EPYC), read from each run's
terrain_levels.json curve (iteration x 1,024 envs x rollout length). Prints the level every 1.2 M steps and writes
level_vs_steps.png beside this file. Usage: python compare.py [LEVELS_JSON_OF_THE_12_STEP_RUN]
(../dog_rough_kl02/compare.py uses `compare` for its own runs.)"""
import json
import math
import sys
from pathlib import Path

HERE = Path(__file__).parent


def level_at(steps: list[float], levels: list[float], million: float) -> float | None:
    """The last logged mean level at or before `million` env steps; None past the run's end."""
    if million > steps[-1]:
        return None
    return [lv for s, lv in zip(steps, levels, strict=True) if s <= million][-1]


def noise_std(run: str | Path, actions: int = 12) -> dict[int, float]:
    """Iteration -> the standard deviation of a Gaussian policy with the run's logged entropy per action
    dimension (TensorBoard's Loss/entropy; the dog has 12 joints)."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(run))
    events.Reload()
    return {s.step: math.exp(s.value / actions - 0.5 * math.log(2 * math.pi * math.e)) for s in events.Scalars("Loss/entropy")}


def print_noise(runs: list[tuple[str, str | Path]], marks: list[int]) -> None:
    """Print the markdown table of the action noise std at the iterations `marks` for each (label, run)."""
    print("\n| action noise std at iteration | " + " | ".join(map(str, marks)) + " |")
    print("|---|" + "---:|" * len(marks))
    for label, run in runs:
        std = noise_std(run)
        print(f"| {label} | " + " | ".join(f"{std[m]:.3f}" if m in std else "–" for m in marks) + " |")


def compare(runs: list[tuple[str, Path, int]], png: Path, marks: list[float], minute_marks: list[float] | None = None) -> None:
    """Print the markdown table of mean level at `marks` (M env steps) for each (label, terrain_levels.json,
    rollout length) and plot the curves into `png`; given `minute_marks`, a second table and panel of the level
    against minutes on the terrain."""
    curves = []
    for label, path, rollout in runs:
        summary = json.loads(path.read_text())
        curve = summary["curve"]
        steps = [i * summary["num_envs"] * rollout / 1e6 for i in curve["iteration"]]
        curves.append((label, steps, curve["mean_level"], curve["minutes"]))
    print("| M env steps on the terrain | " + " | ".join(f"{m:.1f}" for m in marks) + " |")
    print("|---|" + "---:|" * len(marks))
    for label, steps, levels, _ in curves:
        cells = [level_at(steps, levels, m) for m in marks]
        print(f"| {label} | " + " | ".join("–" if c is None else f"{c:.2f}" for c in cells) + " |")
    if minute_marks:
        print()
        print("| terrain minute | " + " | ".join(f"{m:g}" for m in minute_marks) + " |")
        print("|---|" + "---:|" * len(minute_marks))
        for label, _, levels, minutes in curves:
            cells = [level_at(minutes, levels, m) for m in minute_marks]
            print(f"| {label} | " + " | ".join("–" if c is None else f"{c:.2f}" for c in cells) + " |")
    for label, steps, levels, minutes in curves:
        print(f"{label}: {steps[-1]:.1f} M steps in {minutes[-1]:.1f} min, final mean level {levels[-1]:.2f}")

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [(1, "env steps on the terrain (M)", "dog-rough warm-started from 5 min of dog-flat: terrain level against steps")]
    if minute_marks:
        panels.append((3, "minutes on the terrain", "against wall time"))
    fig, axes = plt.subplots(1, len(panels), figsize=(7 * len(panels) if minute_marks else 8, 4.5), squeeze=False)
    for ax, (x, xlabel, title) in zip(axes[0], panels, strict=True):
        for curve in curves:
            ax.plot(curve[x], curve[2], label=curve[0])
        ax.set_xlabel(xlabel)
        ax.set_ylabel("mean terrain level")
        ax.set_title(title)
    axes[0][0].legend()
    fig.tight_layout()
    fig.savefig(png, dpi=120)


if __name__ == "__main__":
    compare([("24 steps (dog_rough_entry)", HERE.parent / "dog_rough_entry" / "terrain_levels.json", 24),
             ("12 steps", Path(sys.argv[1]) if len(sys.argv) > 1 else HERE / "terrain_levels.json", 12)],
            HERE / "level_vs_steps.png", [1.2 * k for k in range(1, 12)])
