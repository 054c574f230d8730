#!/bin/bash
# hand-cube-axis-dr for 30 minutes, seed 1: B = the randomization curriculum (strength from 0),
# A = the full ranges throughout (start 1, step 0); then each final policy on plain and randomized physics.
# The figures came from the code of commit cc5e02c (as ./commands.sh and BENCHMARKS §18 say); it ran right
# after ../so3_2h/so3_2h.sh had finished (one training at a time).
# Usage, from the repository root with canter installed: bash docs/bench/hand/dr_curriculum/dr.sh DIR
# (everything is written in DIR; ../dr_2h/run.sh starts from DIR/B/run).
R=${1:?usage: bash docs/bench/hand/dr_curriculum/dr.sh DIR}
mkdir -p "$R" && cd "$R" || exit 1
date -u > started
T="canter bench time-to-target hand-cube-axis-dr --metric consecutive_successes_mean --target 10 --minutes 30 --eval-every 900 --seed 1"
$T --out B --save-dir B/run > B.log 2>&1; echo "rc=$?" >> B.log
date -u > B_done
$T --out A --save-dir A/run --env.curriculum.randomization.params.start 1 --env.curriculum.randomization.params.step 0 > A.log 2>&1; echo "rc=$?" >> A.log
date -u > A_done
for r in A B; do for t in hand-cube-axis hand-cube-axis-dr; do
  canter eval $r/run --task $t --episodes 256 --num-envs 256 --json > eval_${r}_${t}.json 2> eval_${r}_${t}.err
done; done
date -u > done
