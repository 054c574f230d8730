"""Gather the 2-hour full-SO(3) run's marks into marks.json (run once, on the folder of the raw runs:
python collect.py DIR, DIR as given to so3_2h.sh). One trajectory: src30 (30 min of hand-cube-axis), then
hand-cube-tilt --init-from it for 12 min (tilt_copy), resumed to 29.3 min (tilt_ext), copied to
tilt_2h and resumed in chunks to 45/60/75/90 min of tilts; each mark scored by
`canter eval RUN --episodes 256 --num-envs 256 --json` on the full goal set."""

import json
import re
import sys
from pathlib import Path

root = Path(sys.argv[1])
keys = ("consecutive_successes_mean", "consecutive_successes_median", "consecutive_successes_max",
        "goals_per_minute", "rotation_distance", "ended_by_cube_dropped", "ended_by_goal_time_out",
        "ended_by_success_streak", "mean_episode_length")


def last_range(text: str) -> float:
    return float(re.findall(r"goal_range ([0-9.]+)", text)[-1])


marks = []
axis = root / "eval_2h_axis30.json"
if axis.exists():
    marks.append({"total_min": 30.0, "tilt_min": 0.0, "tilt_range": 0.0, **{k: json.loads(axis.read_text())[k] for k in keys}})
for tilt_min, log, result in ((12.0, "tilt_copy.log", "eval_tilt_copy.json"), (29.3, "tilt_ext.log", "eval_tilt_ext.json")):
    marks.append({"total_min": 30.0 + tilt_min, "tilt_min": tilt_min, "tilt_range": last_range((root / log).read_text()),
                  **{k: json.loads((root / result).read_text())[k] for k in keys}})
chunks = (root / "tilt_2h.log").read_text().split("=== chunk to ")[1:]
for chunk in chunks:
    tilt_min = float(chunk.split(" ")[0])
    result = root / f"eval_2h_tilt{tilt_min:.0f}.json"
    if result.exists():
        marks.append({"total_min": 30.0 + tilt_min, "tilt_min": tilt_min, "tilt_range": last_range(chunk),
                      **{k: json.loads(result.read_text())[k] for k in keys}})
dr = root / "eval_2h_dr.json"
out = {"marks": marks}
if dr.exists():
    out["final_on_hand_cube_dr"] = {k: json.loads(dr.read_text())[k] for k in keys}
Path(__file__).with_name("marks.json").write_text(json.dumps(out, indent=1))
print(json.dumps(out, indent=1))
