#!/bin/bash
# §16, GA3C's balancer on means and the cores split among threads of a kind (share_cores, the default),
# against one trainer at most; Pong then ant, 5 and 3 minutes each, one after the other, nothing else running.
D=${1:?output directory}
mkdir -p "$D"
canter bench ga3c atari-pong --minutes 5 --num-agents 4 --no-a2c --json --out "$D/pong" > "$D/pong.json"
canter bench ga3c atari-pong --minutes 5 --num-agents 4 --no-a2c --json --out "$D/pong_max_trainers_1" \
  --agent.algo.ga3c.max-trainers 1 > "$D/pong_max_trainers_1.json"
canter bench ga3c ant --minutes 3 --no-a2c --json --out "$D/ant" > "$D/ant.json"
canter bench ga3c ant --minutes 3 --no-a2c --json --out "$D/ant_max_trainers_1" \
  --agent.algo.ga3c.max-trainers 1 > "$D/ant_max_trainers_1.json"
