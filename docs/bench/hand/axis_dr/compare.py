"""Goals in a row of each policy on plain and on randomized physics (the eval_<policy>_on_<env>.json of a
folder), as a bar chart. Usage: python compare.py [FOLDER]; FOLDER (default: this file's) may hold
a compare.json {"policies": {name: label}, "title": ..., "png": ...} naming its policies."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

DEFAULT = {
    "policies": {"ls50s0": "hand-cube-axis, seed 0", "ls50s1": "hand-cube-axis, seed 1", "dr30": "hand-cube-axis-dr"},
    "title": "30-minute policies, single-axis goals: plain vs randomized physics",
    "png": "axis_dr.png",
}
ENVS = {"hand-cube-axis": "plain physics", "hand-cube-axis-dr": "randomized physics"}


def main() -> None:
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent
    spec = json.loads((folder / "compare.json").read_text()) if (folder / "compare.json").exists() else DEFAULT
    policies = spec["policies"]
    fig, ax = plt.subplots(figsize=(7, 4))
    width = 0.38
    for j, (env, label) in enumerate(ENVS.items()):
        values = []
        for policy in policies:
            path = folder / f"eval_{policy}_on_{env}.json"
            values.append(json.loads(path.read_text())["consecutive_successes_mean"] if path.exists() else 0.0)
        xs = [i + (j - 0.5) * width for i in range(len(policies))]
        bars = ax.bar(xs, values, width, label=label)
        ax.bar_label(bars, fmt="%.1f")
    ax.set_xticks(range(len(policies)), list(policies.values()))
    ax.set_ylabel("goals in a row (mean of 256 episodes)")
    ax.set_title(spec["title"])
    ax.legend()
    fig.tight_layout()
    fig.savefig(folder / spec["png"], dpi=120)
    print(folder / spec["png"])


if __name__ == "__main__":
    main()
