#!/bin/bash
# §16: how Canter's Atari env stands against Gymnasium's SyncVectorEnv as the number of games and
# emulator threads change: Pong, 3 x 3 s per side, alternating within each command (canter bench atari).
# One command at a time, nothing else running. Writes DIR/n<N>_t<T>.json.
D=${1:?output directory}
mkdir -p "$D"
for n in 16 64 256; do
  canter bench atari --game pong --num-envs "$n" --no-torch-preprocess --json > "$D/n${n}_t2.json"
done
# one emulator thread: the per-core comparison (SyncVectorEnv always runs on one)
canter bench atari --game pong --num-envs 64 --threads 1 --no-torch-preprocess --json > "$D/n64_t1.json"
