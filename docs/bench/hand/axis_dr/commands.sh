#!/bin/bash
# 2026-11-28, AMD EPYC (2 cores, AVX2), one job at a time. The evaluations ran on commit 99f7542's
# code, the training too; the eval_*.json here are its outputs, then
# `python compare.py` drew axis_dr.png. ls50s0/ls50s1: the 30-minute hand-cube-axis runs of ../line_search.
# issue 15's DR comparison on the single-axis goals; one job at a time; code of commit 99f7542
# Usage, from the repository root with canter installed: bash docs/bench/hand/axis_dr/commands.sh DIR LS
# (DIR: where it writes; LS: the DIR given to ../line_search/commands.sh, which holds ls50s0/run and ls50s1/run)
D=${1:?usage: bash docs/bench/hand/axis_dr/commands.sh DIR LS}
LS=${2:?usage: bash docs/bench/hand/axis_dr/commands.sh DIR LS (LS: the DIR of ../line_search/commands.sh)}
mkdir -p "$D"
for s in ls50s0 ls50s1; do
  for t in hand-cube-axis hand-cube-axis-dr; do
    canter eval "$LS/$s/run" --task $t --episodes 256 --num-envs 256 --json > $D/eval_${s}_on_$t.json 2> $D/eval_${s}_on_$t.err
  done
done
echo evals > $D/stage
canter bench time-to-target hand-cube-axis-dr --metric consecutive_successes_mean --target 10 --minutes 30 \
    --eval-every 900 --out $D/dr30 --save-dir $D/dr30/run > $D/dr30.log 2>&1
echo trained > $D/stage
for t in hand-cube-axis hand-cube-axis-dr; do
  canter eval $D/dr30/run --task $t --episodes 256 --num-envs 256 --json > $D/eval_dr30_on_$t.json 2> $D/eval_dr30_on_$t.err
done
echo done > $D/stage
