#!/bin/bash
# §16, Pong's seventh run: the emulators play without sticky actions while training
# (--env.train-repeat-action-probability 0); every evaluation keeps the protocol's sticky actions (0.25).
# Otherwise the Atari defaults. 2026-12-03, a 2-core Zen 5 EPYC, code of 319700a.
D=${1:?output directory}
mkdir -p "$D"
canter bench time-to-target atari-pong --metric mean_return --target 18 --minutes 90 --eval-every 900 \
  --episodes 16 --eval-envs 16 --out "$D/ttt" --save-dir "$D/run" --env.train-repeat-action-probability 0
