"""PPO's time_to_target.json against fasttd3.py's runs (or PPO runs against each other):
forward/lateral tracking errors and the evaluation return against training wall time and env steps,
one PNG. A PPO run is labelled with its folder's name.

    python docs/bench/offpolicy/plot.py OUT.png RUN_DIR [RUN_DIR ...] [--title TITLE]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt


def load(folder: Path) -> tuple[str, list[dict]]:
    ppo = folder / "time_to_target.json"
    if ppo.exists():
        return f"PPO ({folder.name})", json.loads(ppo.read_text())["marks"]
    data = json.loads((folder / "fasttd3.json").read_text())
    cfg = data["config"]
    return (f"FastTD3-style, {cfg['num_envs']} envs, batch {cfg['batch']}, {cfg['updates_per_step']} updates/step",
            data["marks"])


def main() -> None:
    argv = sys.argv[1:]
    title = "dog-flat on 2 CPU cores: PPO against an off-policy learner (256 evaluation episodes per mark)"
    if "--title" in argv:
        at = argv.index("--title")
        title = argv[at + 1]
        del argv[at : at + 2]
    out, folders = Path(argv[0]), [Path(p) for p in argv[1:]]
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    for folder in folders:
        label, marks = load(folder)
        minutes = [m["train_wall_s"] / 60 for m in marks]
        line = axes[0].plot(minutes, [m["lin_vel_x_abs_error"] for m in marks], "o-", label=f"{label}: forward")[0]
        axes[0].plot(minutes, [m["lin_vel_y_abs_error"] for m in marks], "s--", color=line.get_color(),
                     label=f"{label}: lateral")
        axes[1].plot([m["env_steps"] / 1e6 for m in marks], [m["lin_vel_x_abs_error"] for m in marks], "o-", label=label)
        axes[2].plot(minutes, [m["mean_return"] for m in marks], "o-", label=label)
    for ax in axes[:2]:
        ax.axhline(0.15, color="gray", linestyle=":", linewidth=1)
        ax.set_ylabel("tracking error (m/s)")
    axes[0].set_xlabel("training wall time (min)")
    axes[1].set_xlabel("env steps (M)")
    axes[1].set_title("forward error against env steps", fontsize=9)
    axes[2].set_xlabel("training wall time (min)")
    axes[2].set_ylabel("evaluation return")
    for ax in axes:
        ax.grid(True, alpha=0.3)
    axes[0].legend(fontsize=6)
    axes[2].legend(fontsize=7)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main()
