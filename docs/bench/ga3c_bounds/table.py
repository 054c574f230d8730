"""Prints §16's table of the GA3C bound-loss and advantage-normalization runs from their JSON (run
from this directory, or pass it): per run, GA3C's worst and final period return, its largest mean
|μ| over periods, PPS and TPS (run averages), and the A2C side's final return where it ran."""

import json
import math
import sys
from pathlib import Path

here = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent
LABELS = {"off": "neither", "bound": "bound loss only", "on": "both (the defaults)"}
print("| run | GA3C return: worst period / at 5 min | largest mean \\|μ\\| | PPS | TPS | A2C return at 5 min |")
print("|---|---:|---:|---:|---:|---:|")
for setting in ("max_trainers_1", "both"):
    for name in ("off", "bound", "on"):
        data = json.loads((here / f"{setting}_{name}" / "ga3c.json").read_text())
        periods = data["ga3c"]["periods"]
        returns = [p["mean_return"] for p in periods if not math.isnan(p["mean_return"])]
        mu = max(p["losses"].get("action_mean_abs", float("nan")) for p in periods)
        a2c = data.get("a2c") or {}
        iterations = a2c.get("iterations") if isinstance(a2c, dict) else None
        a2c_final = f"{iterations[-1]['mean_return']:.1f}" if iterations else "–"
        summary = data["summary"]
        where = "one trainer at most" if setting == "max_trainers_1" else "balancer free"
        print(f"| {where}, {LABELS[name]} | {min(returns):,.1f} / {returns[-1]:.1f} | {mu:.1f} | "
              f"{summary['ga3c_pps']:,.0f} | {summary['ga3c_tps']:.2f} | {a2c_final} |")
