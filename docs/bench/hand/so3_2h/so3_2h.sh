#!/bin/bash
# The 2-hour full-SO(3) budget: 30 min of hand-cube-axis (src30) + 90 min of hand-cube-tilt.
# tilt_2h is a copy of tilt_ext (29.3 min of tilts); resume it in chunks to 45/60/75/90 min of tilts,
# scoring the full goal set at each mark.
# The figures came from the code of commit 8c1c6d6 (these chunks; the tilts before them ran on c244c84:
# BENCHMARKS §18).
# Usage, from the repository root with canter installed: bash docs/bench/hand/so3_2h/so3_2h.sh DIR
# DIR: where ../tilt_zen5/commands.sh ran (src30, tilt_copy, tilt_ext), with tilt_2h a copy of its tilt_ext;
# everything is written in DIR (then python docs/bench/hand/so3_2h/collect.py DIR).
R=${1:?usage: bash docs/bench/hand/so3_2h/so3_2h.sh DIR}
cd "$R" || exit 1
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
