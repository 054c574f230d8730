"""Goals in a row and drops against training time: hand-cube-axis before and after the Newton solver's
line search was given room to converge (ls_iterations 10 -> 50), two seeds each side."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

HERE = Path(__file__).parent
RUNS = {
    "line search 10 (old), drop -50, seed 0": (HERE.parent / "relative30" / "time_to_target.json", "C0", ":"),
    "line search 10 (old), drop -200, seed 0": (HERE.parent / "drop200" / "seed0" / "time_to_target.json", "C1", ":"),
    "line search 10 (old), drop -200, seed 1": (HERE.parent / "drop200" / "seed1" / "time_to_target.json", "C2", ":"),
    "line search 50, seed 0": (HERE / "seed0" / "time_to_target.json", "C3", "-"),
    "line search 50, seed 1": (HERE / "seed1" / "time_to_target.json", "C4", "-"),
}

fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
for label, (path, color, style) in RUNS.items():
    if not path.exists():
        continue
    marks = json.loads(path.read_text())["marks"]
    minutes = [m["train_wall_s"] / 60 for m in marks]
    for ax, key in zip(axes, ("consecutive_successes_mean", "goals_per_minute", "ended_by_cube_dropped"), strict=True):
        ax.plot(minutes, [m[key] for m in marks], "o", ls=style, color=color, label=label)
axes[0].axhline(10, color="k", lw=0.8, ls="--")
axes[0].set(ylabel="goals in a row (mean, 256 episodes, full goal set)",
            title="hand-cube-axis, 1,024 envs, AMD EPYC 2 cores")
axes[1].set(ylabel="goals per minute", title="turning speed")
axes[2].set(ylabel="share of evaluation episodes ended by a drop", title="drops")
for ax in axes:
    ax.set_xlabel("training wall time (min)")
    ax.grid(alpha=0.3)
axes[0].legend(fontsize=7)
fig.tight_layout()
fig.savefig(HERE / "line_search.png", dpi=110)
