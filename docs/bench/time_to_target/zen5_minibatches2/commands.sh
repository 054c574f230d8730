#!/bin/bash
# BENCHMARKS §15, 2026-12-02, 2-core Zen 5 EPYC, code of a7ba182, one run at a time after §21's seeds 2 and 3
cd "${1:-.}"
for s in 2 3; do
  echo "== mb2 s$s $(date)"
  canter bench time-to-target dog-flat --metric lin_vel_x_abs_error,lin_vel_y_abs_error --target 0.15 --minutes 5 \
      --eval-every 30 --episodes 256 --eval-envs 256 --seed $s --out ttt_mb2_s$s --agent.algo.num-mini-batches 2
done
echo "== all done $(date)"
