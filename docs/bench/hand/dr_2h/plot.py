"""marks.json -> dr_2h.png: goals in a row on the full goal set against training wall time, for the
randomized and the non-randomized 2-hour trajectories on randomized and on plain physics, with the
DR trajectory's tilt range and randomization strength (python plot.py)."""

import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

here = Path(__file__).parent
marks = json.loads((here / "marks.json").read_text())


def curve(axis, name, style, label, color, **kwargs):
    points = marks[name]
    axis.plot([m["total_min"] for m in points], [m["consecutive_successes_mean"] for m in points], style,
              color=color, label=label, **kwargs)


fig, (top, bottom) = plt.subplots(2, 1, figsize=(7.5, 6.5), sharex=True, gridspec_kw={"height_ratios": [2, 1]})
curve(top, "dr_on_dr", "o-", "DR policy, randomized physics", "C0")
curve(top, "plain_on_dr", "s-", "non-DR policy, randomized physics", "C3")
curve(top, "dr_on_plain", "o", "DR policy, plain physics (three marks)", "C0", mfc="none", ms=8)
curve(top, "plain_on_plain", "s:", "non-DR policy, plain physics", "C3")
top.axhline(5.0, color="gray", ls="--", lw=0.8, label="issue 15's bar (mean 5 within 120 min)")
top.set_ylabel("goals in a row, mean, full SO(3) set\n(256 episodes)")
top.set_title("hand-cube-dr: 30 min of hand-cube-axis-dr, then hand-cube-tilt-dr (Zen 5, 2 cores)", fontsize=10)
top.axvspan(0, 30, color="0.92")
top.legend(loc="upper left", fontsize=8)
dr = marks["dr_on_dr"]
bottom.plot([m["total_min"] for m in dr], [m["tilt_range"] for m in dr], "o-", color="C2", label="DR run: tilt range (rad)")
bottom.plot([m["total_min"] for m in dr], [m["randomization"] for m in dr], "d-", color="C1",
            label="DR run: randomization strength")
bottom.plot([m["total_min"] for m in dr], [m["ended_by_cube_dropped"] for m in dr], "^-", color="C3",
            label="DR run: share of episodes ended by a drop")
bottom.set_xlabel("training wall time (min)")
bottom.set_xlim(0, 125)
bottom.legend(loc="upper left", fontsize=8)
fig.tight_layout()
fig.savefig(here / "dr_2h.png", dpi=110)
