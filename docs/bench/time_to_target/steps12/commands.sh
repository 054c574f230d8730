#!/bin/bash
# BENCHMARKS §15: 1,024 envs with rollouts of 12 steps (the 12,288-sample batch and update rate per sample of
# 512 envs x 24, at 1,024 envs' stepping rate) against 512 envs x 24 steps, dog-flat, four seeds, alternated,
# one run at a time (2026-12-03, a 2-core Zen 4 EPYC, code of cdcedd3). Usage: bash commands.sh DIR
set -e
mkdir -p "${1:-.}" && cd "${1:-.}"
for s in 0 1 2 3; do
  for v in steps12 envs512; do
    echo "== $v s$s $(date)"
    if [ $v = steps12 ]; then flags="--num-envs 1024 --agent.algo.num-steps-per-env 12"; else flags="--num-envs 512"; fi
    canter bench time-to-target dog-flat --metric lin_vel_x_abs_error,lin_vel_y_abs_error --target 0.15 --minutes 5 \
        --eval-every 30 --episodes 256 --eval-envs 256 --seed $s $flags --out ttt_${v}_s$s
  done
done
echo "== all done $(date)"
