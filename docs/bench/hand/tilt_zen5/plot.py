"""The two tilt fine-tunes' curriculum range and learning rate against training time, from their
TensorBoard events (Curriculum/goal_range) and progress.csv. Usage: python plot.py FRESH_RUN COPY_RUN OUT.png"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 6), sharex=True)
for run, label in ((sys.argv[1], "optimizer fresh (--init-fresh-optimizer)"), (sys.argv[2], "the source's optimizer (default)")):
    rows = list(csv.DictReader(open(Path(run) / "progress.csv")))
    minutes = {int(float(r["iteration"])): float(r["wall_time_s"]) / 60 for r in rows}
    events = EventAccumulator(str(run))
    events.Reload()
    points = [(minutes[e.step], e.value) for e in events.Scalars("Curriculum/goal_range") if e.step in minutes]
    top.plot(*zip(*points), label=label)
    bottom.semilogy([minutes[int(float(r["iteration"]))] for r in rows], [float(r["learning_rate"]) for r in rows], label=label, lw=0.8)
top.set_ylabel("tilt range (rad)")
top.legend()
bottom.set_ylabel("learning rate (adaptive)")
bottom.set_xlabel("training minutes of the fine-tune")
top.set_title("hand-cube-tilt from a 30-min hand-cube-axis policy (Zen 5 EPYC, 1,024 envs)")
fig.tight_layout()
fig.savefig(sys.argv[3], dpi=110)
