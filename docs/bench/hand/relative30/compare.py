"""Goals in a row against training time: absolute finger targets (goal_clock/) and relative ones (here)."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

HERE = Path(__file__).parent
RUNS = {
    "absolute targets (home + 0.6 a), code 324643e": HERE.parent / "goal_clock" / "time_to_target.json",
    "relative targets (+0.1 a per step), code 5ac9512": HERE / "time_to_target.json",
}

fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
for label, path in RUNS.items():
    marks = json.loads(path.read_text())["marks"]
    minutes = [m["train_wall_s"] / 60 for m in marks]
    left.plot(minutes, [m["consecutive_successes_mean"] for m in marks], "o-", label=label)
    right.plot(minutes, [m["train_curriculum_goal_range"] for m in marks], "o-", label=label)
left.set(xlabel="training wall time (min)", ylabel="goals in a row (mean, 256 episodes, full goal set)",
         title="hand-cube-axis, 1,024 envs, AMD EPYC 2 cores")
right.set(xlabel="training wall time (min)", ylabel="training goal range (rad)", title="goal curriculum")
for ax in (left, right):
    ax.grid(alpha=0.3)
left.legend(fontsize=8)
fig.tight_layout()
fig.savefig(HERE / "absolute_vs_relative.png", dpi=110)
