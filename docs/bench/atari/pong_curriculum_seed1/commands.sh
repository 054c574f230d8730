#!/bin/bash
# §16, Pong's tenth run: the eighth run's recipe (the sticky-actions curriculum: the first 5 M training
# frames on deterministic emulators, then the protocol's sticky actions 0.25; the rate annealed to 0 over
# 90 minutes) on a second seed, --seed 1 (the eighth ran on the default, 0). Every evaluation plays the
# protocol's sticky actions, greedy. 2026-12-05, a 2-core Zen 4 EPYC, code of e7a6692.
D=${1:?output directory}
mkdir -p "$D"
canter bench time-to-target atari-pong --metric mean_return --target 18 --minutes 90 --eval-every 900 \
  --episodes 16 --eval-envs 16 --out "$D/ttt" --save-dir "$D/run" --env.train-repeat-action-probability 0 \
  --env.train-repeat-action-frames 5000000 --seed 1
# the 90- and 75-minute policies over 128 games each (the same greedy protocol, eval's own seed):
for m in 90 75; do
  canter eval "$D/run" --checkpoint "$D/run/checkpoint_${m}min.pt" --episodes 128 --num-envs 64 --json \
    > "$D/eval_${m}min_128games.json"
done
