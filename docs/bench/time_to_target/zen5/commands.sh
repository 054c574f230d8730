#!/bin/bash
# BENCHMARKS §21, 2-core Zen 5 EPYCs, one run at a time, in this order within each pair of seeds:
# seeds 0 and 1 on 2026-11-29 (code of 617c6fd), seeds 2 and 3 on 2026-12-02 (code of 95d7337; that VM
# stepped the dog about 15 % slower). Interpolated crossings of all eight runs: python3 interpolate.py
for s in 0 1 2 3; do
  for v in fp32 bf16; do
    if [ $v = bf16 ]; then X="--agent.algo.autocast bf16"; else X=""; fi
    canter bench time-to-target dog-flat --metric lin_vel_x_abs_error,lin_vel_y_abs_error --target 0.15 --minutes 5 \
        --eval-every 30 --episodes 256 --eval-envs 256 --seed $s --out ttt_${v}_s$s $X
  done
done
