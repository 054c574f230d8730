#!/usr/bin/env bash
# dog-flat time to target: actor and critic 128-64 against the defaults (256-128-64) on seeds 0 and 1,
# interleaved, then the critic alone at 128-64 on seed 0; one at a time.
# Usage: bash docs/bench/time_to_target/zen1_small_nets/run.sh OUT_DIR [MINUTES]
set -euo pipefail
out=${1:?OUT_DIR}
minutes=${2:-14}
mkdir -p "$out"
common=(dog-flat --metric lin_vel_x_abs_error,lin_vel_y_abs_error --target 0.15 --minutes "$minutes"
        --eval-every 120 --episodes 256 --eval-envs 256)
small=(--agent.policy.actor-hidden-dims 128 64 --agent.policy.critic-hidden-dims 128 64)
for seed in 0 1; do
  canter bench time-to-target "${common[@]}" --seed "$seed" --out "$out/small_s$seed" "${small[@]}"
  canter bench time-to-target "${common[@]}" --seed "$seed" --out "$out/default_s$seed"
done
canter bench time-to-target "${common[@]}" --seed 0 --out "$out/critic_s0" --agent.policy.critic-hidden-dims 128 64
