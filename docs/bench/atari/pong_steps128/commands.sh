#!/bin/bash
# §16, Pong's fifth run: rollouts of 128 steps (64 games, 32 minibatches of 256: the gradient steps per
# frame of the defaults), otherwise the Atari defaults. 2026-12-02, a 2-core Zen 5 EPYC, code of 18372b8.
D=${1:?output directory}
canter bench time-to-target atari-pong --metric mean_return --target 18 --minutes 90 --eval-every 900 \
  --episodes 16 --eval-envs 16 --out "$D/ttt" --save-dir "$D/run" \
  --agent.algo.num-steps-per-env 128 --agent.algo.num-mini-batches 32
