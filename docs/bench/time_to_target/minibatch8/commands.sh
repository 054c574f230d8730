#!/bin/bash
# BENCHMARKS §15: 1,024 envs with 8 minibatches (the gradient steps per sample of 512 envs x 4) against the
# default 4, dog-flat, four seeds, alternated, one run at a time (2026-12-03, a 2-core Zen 4 EPYC, code of cdcedd3).
# Usage: bash commands.sh DIR
set -e
mkdir -p "${1:-.}" && cd "${1:-.}"
for s in 0 1 2 3; do
  for mb in 4 8; do
    echo "== minibatches $mb s$s $(date)"
    canter bench time-to-target dog-flat --metric lin_vel_x_abs_error,lin_vel_y_abs_error --target 0.15 --minutes 5 \
        --eval-every 30 --episodes 256 --eval-envs 256 --seed $s --num-envs 1024 \
        --agent.algo.num-mini-batches $mb --out ttt_mb${mb}_s$s
  done
done
echo "== all done $(date)"
