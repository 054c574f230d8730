"""Goals in a row and drops against training time: the drop penalty at -50 (relative30/) and -200 (here, two seeds)."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

HERE = Path(__file__).parent
RUNS = {
    "drop -50, seed 0 (code 5ac9512)": HERE.parent / "relative30" / "time_to_target.json",
    "drop -200, seed 0 (code 9c95713)": HERE / "seed0" / "time_to_target.json",
    "drop -200, seed 1 (code 9c95713)": HERE / "seed1" / "time_to_target.json",
}

fig, axes = plt.subplots(1, 3, figsize=(14, 4))
for label, path in RUNS.items():
    if not path.exists():
        continue
    marks = json.loads(path.read_text())["marks"]
    minutes = [m["train_wall_s"] / 60 for m in marks]
    for ax, key in zip(axes, ("consecutive_successes_mean", "goals_per_minute", "ended_by_cube_dropped"), strict=True):
        ax.plot(minutes, [m[key] for m in marks], "o-", label=label)
axes[0].set(ylabel="goals in a row (mean, 256 episodes, full goal set)",
            title="hand-cube-axis, 1,024 envs, AMD EPYC 2 cores")
axes[1].set(ylabel="goals per minute", title="turning speed")
axes[2].set(ylabel="share of evaluation episodes ended by a drop", title="drops")
for ax in axes:
    ax.set_xlabel("training wall time (min)")
    ax.grid(alpha=0.3)
axes[0].legend(fontsize=8)
fig.tight_layout()
fig.savefig(HERE / "drop_penalty.png", dpi=110)
