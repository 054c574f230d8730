#!/bin/bash
# hand-cube-dr's 2-hour budget: 30 min of hand-cube-axis-dr with the randomization curriculum (B/run of
# ../dr_curriculum/dr.sh, time-to-target seed 1) + 90 min of hand-cube-tilt-dr --init-from it, in 15-minute
# chunks, each mark scored on hand-cube-dr (full SO(3), randomized physics, s = 1).
# The figures came from the code of commit 4cef834 (BENCHMARKS §18).
# Usage, from the repository root with canter installed: bash docs/bench/hand/dr_2h/run.sh DIR DR
# (DR: the DIR given to ../dr_curriculum/dr.sh, which holds B/run; everything is written in DIR; then after.sh)
U="usage: bash docs/bench/hand/dr_2h/run.sh DIR DR"
R=${1:?$U}
DR=$(cd "${2:?$U}" && pwd) || exit 1
mkdir -p "$R" && cd "$R" || exit 1
date -u > started
echo "=== chunk to 15 min of tilts: $(date -u)" >> tiltdr.log
canter train hand-cube-tilt-dr --init-from "$DR/B/run" --max-time 900 --run-dir tiltdr \
  --env.curriculum.randomization.params.start 1 >> tiltdr.log 2>&1
echo "rc=$?" >> tiltdr.log
cp tiltdr/checkpoint.pt tiltdr/checkpoint_tilt15min.pt
canter eval tiltdr --task hand-cube-dr --episodes 256 --num-envs 256 --json > eval_tilt15.json 2> eval_tilt15.err
date -u >> marks
for m in 30 45 60 75 90; do
  echo "=== chunk to $m min of tilts: $(date -u)" >> tiltdr.log
  canter train --resume tiltdr --max-time 900 >> tiltdr.log 2>&1
  echo "rc=$?" >> tiltdr.log
  cp tiltdr/checkpoint.pt tiltdr/checkpoint_tilt${m}min.pt
  canter eval tiltdr --task hand-cube-dr --episodes 256 --num-envs 256 --json > eval_tilt${m}.json 2> eval_tilt${m}.err
  date -u >> marks
done
canter eval tiltdr --task hand-cube --episodes 256 --num-envs 256 --json > eval_tilt90_plain.json 2> eval_tilt90_plain.err
date -u > done
