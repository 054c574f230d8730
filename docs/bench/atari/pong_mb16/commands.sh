#!/bin/bash
# §16, Pong's eleventh run: twice the gradient steps per frame (4 epochs x 16 minibatches of 128 instead
# of 8 of 256) on the eighth run's sticky-actions curriculum (the first 5 M training frames on
# deterministic emulators, then the protocol's 0.25; every evaluation plays the protocol's).
# 2026-12-07, a 2-core Zen 4 EPYC (family 25 model 17, AVX512-BF16), code of b74feac.
D=${1:?output directory}
mkdir -p "$D"
canter bench time-to-target atari-pong --metric mean_return --target 18 --minutes 90 --eval-every 900 \
  --episodes 16 --eval-envs 16 --out "$D/ttt" --save-dir "$D/run" --env.train-repeat-action-probability 0 \
  --env.train-repeat-action-frames 5000000 --agent.algo.num-mini-batches 16
# the 75- and 90-minute policies over 128 games (the same greedy protocol, eval's own seed):
canter eval "$D/run" --checkpoint "$D/run/checkpoint_75min.pt" --episodes 128 --num-envs 64 --json > "$D/eval_75min_128games.json"
canter eval "$D/run" --checkpoint "$D/run/checkpoint_90min.pt" --episodes 128 --num-envs 64 --json > "$D/eval_90min_128games.json"
