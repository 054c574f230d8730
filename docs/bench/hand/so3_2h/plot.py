"""marks.json -> so3_2h.png: goals in a row on the full goal set against training wall time, with
the tilt curriculum's range (python plot.py)."""

import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

here = Path(__file__).parent
marks = json.loads((here / "marks.json").read_text())["marks"]
t = [m["total_min"] for m in marks]
fig, (top, bottom) = plt.subplots(2, 1, figsize=(7.5, 6.5), sharex=True, gridspec_kw={"height_ratios": [2, 1]})
top.plot(t, [m["consecutive_successes_mean"] for m in marks], "o-", label="mean")
top.plot(t, [m["consecutive_successes_median"] for m in marks], "s--", label="median")
top.axhline(5.0, color="gray", ls=":", label="target (mean 5 within 120 min)")
top.set_ylabel("goals in a row, full SO(3) set\n(256 episodes)")
top.set_title("hand-cube: 30 min of hand-cube-axis, then hand-cube-tilt (Zen 5, 2 cores)")
top.axvspan(0, 30, color="0.92")
top.text(2, top.get_ylim()[1] * 0.9, "hand-cube-axis", fontsize=8)
top.legend(loc="upper left", bbox_to_anchor=(0.25, 1.0))
bottom.plot(t, [m["tilt_range"] for m in marks], "o-", color="C2", label="tilt range (rad)")
bottom.plot(t, [m["ended_by_cube_dropped"] for m in marks], "^-", color="C3", label="episodes ended by a drop")
bottom.set_xlabel("training wall time (min)")
bottom.set_xlim(0, 125)
bottom.legend(loc="upper left")
fig.tight_layout()
fig.savefig(here / "so3_2h.png", dpi=110)
