#!/bin/bash
# BENCHMARKS §21, 2026-11-29, 2-core Zen 5 EPYC, code of 617c6fd, in this order, one at a time:
for s in 0 1; do
  for v in fp32 bf16; do
    if [ $v = bf16 ]; then X="--agent.algo.autocast bf16"; else X=""; fi
    canter bench time-to-target dog-flat --metric lin_vel_x_abs_error,lin_vel_y_abs_error --target 0.15 --minutes 5 \
        --eval-every 30 --episodes 256 --eval-envs 256 --seed $s --out ttt_${v}_s$s $X
  done
done
# seeds 2 and 3, 2026-12-02, a 2-core Zen 5 EPYC again (this VM ran the dog ~15 % slower than on
# 11-29), code of 95d7337, in this order, one at a time, nothing else running:
for s in 2 3; do
  for v in fp32 bf16; do
    if [ $v = bf16 ]; then X="--agent.algo.autocast bf16"; else X=""; fi
    canter bench time-to-target dog-flat --metric lin_vel_x_abs_error,lin_vel_y_abs_error --target 0.15 --minutes 5 \
        --eval-every 30 --episodes 256 --eval-envs 256 --seed $s --out ttt_${v}_s$s $X
  done
done
# interpolated crossings of all eight runs: python3 interpolate.py
