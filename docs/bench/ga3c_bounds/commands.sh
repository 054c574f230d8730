#!/bin/bash
# §16, GA3C on ant: the bound loss on the Gaussian means (AlgoCfg.bounds_loss_coef, 0.01 by default for
# ga3c and a2c) and advantages normalized per training batch (Ga3cCfg.normalize_advantages, default on).
# 5 minutes per side, one run after the other, nothing else running. First with one trainer at most
# (the setting that diverged in docs/bench/ga3c_share_cores), GA3C only: neither, the bound only,
# both (the defaults); then GA3C against synchronous A2C with the balancer free, the same three.
# Each run writes DIR/RUN/ga3c.json and ga3c.png; table.py prints BENCHMARKS.md's table from them.
D=${1:?output directory}
mkdir -p "$D"
OFF="--agent.algo.bounds-loss-coef 0 --agent.algo.ga3c.no-normalize-advantages"
BOUND="--agent.algo.ga3c.no-normalize-advantages"
for name in off bound on; do
  case $name in off) FLAGS=$OFF;; bound) FLAGS=$BOUND;; on) FLAGS="";; esac
  canter bench ga3c ant --minutes 5 --no-a2c --out "$D/max_trainers_1_$name" \
    --agent.algo.ga3c.max-trainers 1 $FLAGS
done
for name in off bound on; do
  case $name in off) FLAGS=$OFF;; bound) FLAGS=$BOUND;; on) FLAGS="";; esac
  canter bench ga3c ant --minutes 5 --out "$D/both_$name" $FLAGS
done
