#!/bin/bash
# §16, Pong's eighth run: a sticky-actions curriculum. The first 5 M training frames on deterministic
# emulators (--env.train-repeat-action-probability 0), then the protocol's sticky actions (0.25) to the
# end (--env.train-repeat-action-frames 5000000); every evaluation plays the protocol's. Otherwise the
# Atari defaults. 2026-12-03, a 2-core Zen 5 EPYC, code of 3dce4ba.
D=${1:?output directory}
mkdir -p "$D"
canter bench time-to-target atari-pong --metric mean_return --target 18 --minutes 90 --eval-every 900 \
  --episodes 16 --eval-envs 16 --out "$D/ttt" --save-dir "$D/run" --env.train-repeat-action-probability 0 \
  --env.train-repeat-action-frames 5000000
# the 75- and 90-minute policies over 128 games (the same greedy protocol, eval's own seed):
canter eval "$D/run" --checkpoint "$D/run/checkpoint_75min.pt" --episodes 128 --num-envs 64 --json > "$D/eval_75min_128games.json"
canter eval "$D/run" --checkpoint "$D/run/checkpoint_90min.pt" --episodes 128 --num-envs 64 --json > "$D/eval_90min_128games.json"
# added on the same day, with code of 996c3a8: both policies over 128 games with actions sampled from them
canter eval "$D/run" --checkpoint "$D/run/checkpoint_75min.pt" --episodes 128 --num-envs 64 --stochastic --json > "$D/eval_75min_128games_stochastic.json"
canter eval "$D/run" --checkpoint "$D/run/checkpoint_90min.pt" --episodes 128 --num-envs 64 --stochastic --json > "$D/eval_90min_128games_stochastic.json"
