#!/bin/bash
# §16, Pong's ninth run: the eighth run's sticky-actions curriculum (deterministic emulators for the
# first 5 M training frames, then the protocol's 0.25) with the linear anneal ending at a floor of
# 5e-5 instead of 0 (--agent.algo.min-learning-rate 5e-5: the same slope as an anneal to 0 over a
# nominal 112.5 minutes, cut at 90). Otherwise the Atari defaults. 2026-12-03, a 2-core Zen 5 EPYC.
D=${1:?output directory}
mkdir -p "$D"
canter bench time-to-target atari-pong --metric mean_return --target 18 --minutes 90 --eval-every 900 \
  --episodes 16 --eval-envs 16 --out "$D/ttt" --save-dir "$D/run" --env.train-repeat-action-probability 0 \
  --env.train-repeat-action-frames 5000000 --agent.algo.min-learning-rate 5e-5
# the 75- and 90-minute policies over 128 games (the same greedy protocol, eval's own seed):
canter eval "$D/run" --checkpoint "$D/run/checkpoint_75min.pt" --episodes 128 --num-envs 64 --json > "$D/eval_75min_128games.json"
canter eval "$D/run" --checkpoint "$D/run/checkpoint_90min.pt" --episodes 128 --num-envs 64 --json > "$D/eval_90min_128games.json"
# the 90-minute policy over 128 games with actions sampled from it (canter eval --stochastic, code of 996c3a8):
canter eval "$D/run" --checkpoint "$D/run/checkpoint_90min.pt" --episodes 128 --num-envs 64 --stochastic --json > "$D/eval_90min_128games_stochastic.json"
