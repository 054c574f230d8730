#!/bin/bash
# hand-cube-axis-dr for 30 minutes, seed 1: B = the randomization curriculum (strength from 0),
# A = the full ranges throughout (start 1, step 0); then each final policy on plain and randomized physics.
. /work/main/.venv/bin/activate
export PYTHONPATH=/work/wt-dr/src
cd /work/runs-dr
while [ ! -e /work/runs-hand/so3_2h_done ]; do sleep 10; done
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
