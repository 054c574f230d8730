#!/bin/bash
# The 2-hour full-SO(3) budget: 30 min of hand-cube-axis (src30) + 90 min of hand-cube-tilt.
# tilt_2h is a copy of tilt_ext (29.3 min of tilts); resume it in chunks to 45/60/75/90 min of tilts,
# scoring the full goal set at each mark.
. /work/main/.venv/bin/activate
export PYTHONPATH=/work/wt-hand/src
cd /work/runs-hand
date -u > so3_2h_started
for spec in "944 45" "900 60" "900 75" "900 90"; do
  set -- $spec
  echo "=== chunk to $2 min of tilts: $(date -u)" >> tilt_2h.log
  canter train --resume tilt_2h --max-time $1 >> tilt_2h.log 2>&1
  echo "rc=$?" >> tilt_2h.log
  cp tilt_2h/checkpoint.pt tilt_2h/checkpoint_tilt${2}min.pt
  canter eval tilt_2h --episodes 256 --num-envs 256 --json > eval_2h_tilt${2}.json 2> eval_2h_tilt${2}.err
  date -u >> so3_2h_marks
done
canter eval tilt_2h --task hand-cube-dr --episodes 256 --num-envs 256 --json > eval_2h_dr.json 2> eval_2h_dr.err
date -u > so3_2h_done
