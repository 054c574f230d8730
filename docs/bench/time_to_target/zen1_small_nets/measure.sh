#!/usr/bin/env bash
# dog-flat throughput at two network sizes: raw and env, then 60 s of training each, one at a time.
# Usage: bash docs/bench/time_to_target/zen1_small_nets/measure.sh OUT_DIR
set -euo pipefail
out=${1:?OUT_DIR}
mkdir -p "$out"
small=(--agent.policy.actor-hidden-dims 128 64 --agent.policy.critic-hidden-dims 128 64)
canter bench env dog-flat --num-envs 1024 --seconds 5 --repeats 3 --json > "$out/env.json"
canter bench train dog-flat --max-time 60 --json > "$out/train_default.json"
canter bench train dog-flat --max-time 60 --json "${small[@]}" > "$out/train_small.json"
canter bench train dog-flat --max-time 60 --json --agent.policy.critic-hidden-dims 128 64 > "$out/train_critic.json"
