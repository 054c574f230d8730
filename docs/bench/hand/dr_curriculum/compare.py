"""Goals in a row of each policy on plain and on randomized physics (the eval_*.json beside this file),
as dr_curriculum.png. Usage: python compare.py"""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

HERE = Path(__file__).parent
POLICIES = {"plain": "hand-cube-axis\n(no DR)", "full": "hand-cube-axis-dr\nfull ranges throughout", "curriculum": "hand-cube-axis-dr\nrandomization curriculum"}
ENVS = {"hand-cube-axis": "plain physics", "hand-cube-axis-dr": "randomized physics"}


def main() -> None:
    fig, ax = plt.subplots(figsize=(7, 4))
    width = 0.38
    for j, (env, label) in enumerate(ENVS.items()):
        values = []
        for policy in POLICIES:
            path = HERE / f"eval_{policy}_on_{env}.json"
            values.append(json.loads(path.read_text())["consecutive_successes_mean"] if path.exists() else 0.0)
        xs = [i + (j - 0.5) * width for i in range(len(POLICIES))]
        bars = ax.bar(xs, values, width, label=label)
        ax.bar_label(bars, fmt="%.1f")
    ax.set_xticks(range(len(POLICIES)), list(POLICIES.values()))
    ax.set_ylabel("goals in a row (mean of 256 episodes)")
    ax.set_title("30-minute policies, single-axis goals (Zen 5, seed 1)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(HERE / "dr_curriculum.png", dpi=120)
    print(HERE / "dr_curriculum.png")


if __name__ == "__main__":
    main()
