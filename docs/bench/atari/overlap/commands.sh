#!/bin/bash
# §16: Pong's training throughput with and without --agent.overlap (collect iteration k+1 while learning
# from k), alternated, one after the other. 2026-12-03, a 2-core Zen 5 EPYC, code of 0b95c7d.
D=${1:?output directory}
mkdir -p "$D"
B="canter bench train atari-pong --max-time 30 --num-envs 64 --json"
$B > "$D/a1.json"; $B --agent.overlap > "$D/b1.json"; $B > "$D/a2.json"; $B --agent.overlap > "$D/b2.json"
# then one core each for the learner and the collection (emulator and inference) while they overlap
S="--agent.overlap --agent.learn-threads 1 --agent.rollout-threads 1 --env.num-threads 1"
$B > "$D/a3.json"; $B $S > "$D/c1.json"; $B > "$D/a4.json"; $B $S > "$D/c2.json"
