#!/bin/bash
# §16, Pong's twelfth run: the eleventh run's 16 minibatches of 128 with the switch to the protocol's
# sticky actions after 3 M training frames instead of 5 M (more of the run under the protocol; the
# deterministic phase ends about where the eleventh run's training score had passed +15).
# 2026-12-07, a 2-core Zen 4 EPYC (family 25 model 17, AVX512-BF16), code of 9d7570b.
D=${1:?output directory}
mkdir -p "$D"
canter bench time-to-target atari-pong --metric mean_return --target 18 --minutes 90 --eval-every 900 \
  --episodes 16 --eval-envs 16 --out "$D/ttt" --save-dir "$D/run" --env.train-repeat-action-probability 0 \
  --env.train-repeat-action-frames 3000000 --agent.algo.num-mini-batches 16
# the 75- and 90-minute policies over 128 games (the same greedy protocol, eval's own seed):
canter eval "$D/run" --checkpoint "$D/run/checkpoint_75min.pt" --episodes 128 --num-envs 64 --json > "$D/eval_75min_128games.json"
canter eval "$D/run" --checkpoint "$D/run/checkpoint_90min.pt" --episodes 128 --num-envs 64 --json > "$D/eval_90min_128games.json"
