#!/bin/bash
# §16, where GA3C's threads spend a Pong run: 5 minutes of GA3C alone, the balancer free, then with
# one trainer at most. 2026-12-02, a 2-core Zen 5 EPYC, one after the other, nothing else running.
D=${1:?output directory}
canter bench ga3c atari-pong --minutes 5 --num-agents 4 --no-a2c --json --out "$D" > "$D.json"
canter bench ga3c atari-pong --minutes 5 --num-agents 4 --no-a2c --json --out "$D/max_trainers_1" \
  --agent.algo.ga3c.max-trainers 1 > "$D.max_trainers_1.json"
