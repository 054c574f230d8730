#!/bin/bash
# BENCHMARKS §15: 512 envs against the default 1,024 on dog-flat, four seeds, alternated, one run at a time
# (2026-12-03, a 2-core Zen 4 EPYC, code of 0bc08af). Usage: bash commands.sh DIR
set -e
mkdir -p "${1:-.}" && cd "${1:-.}"
for s in 0 1 2 3; do
  for n in 1024 512; do
    echo "== envs $n s$s $(date)"
    canter bench time-to-target dog-flat --metric lin_vel_x_abs_error,lin_vel_y_abs_error --target 0.15 --minutes 5 \
        --eval-every 30 --episodes 256 --eval-envs 256 --seed $s --num-envs $n --out ttt_envs${n}_s$s
  done
done
echo "== all done $(date)"
