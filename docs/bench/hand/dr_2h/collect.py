"""Gather the 2-hour hand-cube-dr budget's marks into marks.json and copy the raw evaluations here
(run once: python collect.py DIR, DIR as given to run.sh and after.sh). One trajectory: 30 min of
hand-cube-axis-dr with the randomization curriculum (the time-to-target run of docs/bench/hand/dr_curriculum,
seed 1), then hand-cube-tilt-dr --init-from it, in 15-minute chunks (run.sh); every mark scored by
`canter eval RUN --task hand-cube-dr --episodes 256 --num-envs 256 --json` (the full goal set on the full
randomization ranges). The non-randomized 2-hour trajectory (docs/bench/hand/so3_2h) is scored on the
same randomized physics at its own marks (after.sh)."""

import json
import re
import shutil
import sys
from pathlib import Path

root = Path(sys.argv[1])
here = Path(__file__).parent
so3 = here.parent / "so3_2h"
keys = ("consecutive_successes_mean", "consecutive_successes_median", "consecutive_successes_max",
        "goals_per_minute", "ended_by_cube_dropped", "ended_by_goal_time_out", "mean_episode_length")


def result(path: Path) -> dict:
    shutil.copy(path, here / path.name)
    return {k: json.loads(path.read_text())[k] for k in keys}


def last(name: str, text: str) -> float:
    return float(re.findall(name + r" ([0-9.]+)", text)[-1])


dr = [{"total_min": 30.0, "tilt_min": 0.0, "tilt_range": 0.0, "randomization": 1.0,
       **result(root / "x_drsrc_on_dr.json")}]
chunks = (root / "tiltdr.log").read_text().split("=== chunk to ")[1:]
for chunk in chunks:
    tilt_min = float(chunk.split(" ")[0])
    path = root / f"eval_tilt{tilt_min:.0f}.json"
    if path.exists():
        dr.append({"total_min": 30.0 + tilt_min, "tilt_min": tilt_min, "tilt_range": last("goal_range", chunk),
                   "randomization": last("randomization", chunk), **result(path)})
plain_on_dr = [{"total_min": 30.0, **result(root / "x_plain30_on_dr.json")},
               {"total_min": 59.3, **result(root / "x_plain59_on_dr.json")}]
for tilt_min in (45, 60, 75):
    plain_on_dr.append({"total_min": 30.0 + tilt_min, **result(root / f"x_plaintilt{tilt_min}_on_dr.json")})
plain_on_dr.append({"total_min": 120.0, **{k: json.loads((so3 / "eval_2h_dr.json").read_text())[k] for k in keys}})
dr_on_plain = [{"total_min": 30.0, **result(root / "x_drsrc_on_plain.json")},
               {"total_min": 90.0, **result(root / "x_drtilt60_on_plain.json")},
               {"total_min": 120.0, **result(root / "eval_tilt90_plain.json")}]
plain_on_plain = [{k: m[k] for k in ("total_min", *keys) if k in m}
                  for m in json.loads((so3 / "marks.json").read_text())["marks"]]
out = {"dr_on_dr": dr, "plain_on_dr": plain_on_dr, "dr_on_plain": dr_on_plain, "plain_on_plain": plain_on_plain}
(here / "marks.json").write_text(json.dumps(out, indent=1))
for name in ("run.sh", "after.sh", "tiltdr.log"):
    if name == "tiltdr.log" or (root / name).exists():  # the scripts: copied only where DIR holds them
        shutil.copy(root / name, here / name)
shutil.copy(root / "tiltdr" / "progress.csv", here / "progress_tiltdr.csv")
print(json.dumps({k: [(m["total_min"], round(m["consecutive_successes_mean"], 2)) for m in v] for k, v in out.items()}))
