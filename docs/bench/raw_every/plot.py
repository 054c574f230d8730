"""BENCHMARKS §3: plot and tabulate `canter bench train ... --raw-every K --json` reports.

Usage, from the repository root: python docs/bench/raw_every/plot.py REPORT.json [REPORT.json ...]
Writes REPORT.png beside each report (top: training's total FPS and raw Batch on the same states,
window by window, against training minutes; bottom: total / raw and the physics phase / raw) and
prints one line per report: medians, quartiles and the spread of the windows.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt


def main(paths: list[str]) -> None:
    for name in paths:
        path = Path(name)
        data = json.loads(path.read_text())
        windows = data["raw_windows"]
        steps = data["num_envs"] * data["num_steps_per_env"]
        minutes, clock = [], 0.0  # training time at each window's end (the warm-up iteration left out)
        for window in windows:
            clock += window["iterations"] * steps / window["total_fps"]
            minutes.append(clock / 60.0)
        ratios = [w["total_over_raw"] for w in windows]
        physics = [w["physics_over_raw"] for w in windows]
        quartiles = statistics.quantiles(ratios, n=4)
        print(f"{path.name}: {data['task']}, {data['num_envs']} envs, {len(windows)} windows of {data['raw_every']} "
              f"iterations over {clock / 60.0:.1f} min; total / raw median {statistics.median(ratios):.3f} "
              f"(quartiles {quartiles[0]:.3f}-{quartiles[2]:.3f}, {min(ratios):.3f}-{max(ratios):.3f}); physics / raw "
              f"{statistics.median(physics):.3f}; raw {statistics.median(w['raw_env_states_fps'] for w in windows):,.0f} "
              f"({min(w['raw_env_states_fps'] for w in windows):,.0f}-{max(w['raw_env_states_fps'] for w in windows):,.0f}) "
              f"steps/s; total {statistics.median(w['total_fps'] for w in windows):,.0f} steps/s")
        fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 6), sharex=True)
        top.plot(minutes, [w["raw_env_states_fps"] for w in windows], label="raw Batch on the window's states")
        top.plot(minutes, [w["total_fps"] for w in windows], label="training, total")
        top.set_ylabel("env steps / s")
        top.legend()
        top.set_title(f"{data['task']}, {data['num_envs']} envs: raw measured beside the training")
        bottom.plot(minutes, ratios, label="total / raw")
        bottom.plot(minutes, physics, label="physics phase / raw", alpha=0.6)
        bottom.axhline(0.75, color="grey", linestyle="--", linewidth=0.8, label="issue 14's 0.75")
        bottom.set_xlabel("training minutes")
        bottom.set_ylabel("ratio")
        bottom.legend()
        fig.tight_layout()
        fig.savefig(path.with_suffix(".png"), dpi=110)
        plt.close(fig)


if __name__ == "__main__":
    main(sys.argv[1:] or sys.exit(__doc__))
