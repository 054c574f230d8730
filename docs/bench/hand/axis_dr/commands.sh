#!/bin/bash
# 2026-11-28, AMD EPYC (2 cores, AVX2), one job at a time. The evaluations ran on commit 99f7542's
# code (worktree /work/wt-eval), the training too; the eval_*.json here are its outputs, then
# `python compare.py` drew axis_dr.png. ls50s0/ls50s1: the 30-minute hand-cube-axis runs of ../line_search.
# issue 15's DR comparison on the single-axis goals; one job at a time; code of the worktree /work/wt-eval
cd /work/main && . .venv/bin/activate
export PYTHONPATH=/work/wt-eval/src
D=/work/runs-hand-dr
for s in ls50s0 ls50s1; do
  for t in hand-cube-axis hand-cube-axis-dr; do
    canter eval /work/runs-hand-ls/$s/run --task $t --episodes 256 --num-envs 256 --json > $D/eval_${s}_on_$t.json 2> $D/eval_${s}_on_$t.err
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
