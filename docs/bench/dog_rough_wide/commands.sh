#!/bin/bash
# BENCHMARKS §6: dog-rough's warm-start hour with legged_gym's and Isaac Lab's rough-terrain networks, 512-256-128
# for the actor and the critic, instead of the task's 256-128-64: 5 minutes of dog-flat with those networks (its own
# warm start: the defaults' flat5 has the small ones), then 55 on the terrain with the update in bfloat16
# (--agent.algo.autocast bf16, measured level with float32 in ../dog_rough_hour), then the levels and the grid
# evaluation. Usage: bash commands.sh DIR
set -ex
R=${1:-runs-rough-wide}
NET=(--agent.policy.actor-hidden-dims 512 256 128 --agent.policy.critic-hidden-dims 512 256 128)
mkdir -p "$R"
date
canter train dog-flat --max-time 300 --max-iterations 100000 --run-dir "$R/flat5" "${NET[@]}"
date
# the terrain hour, the levels and the grid evaluation: ../dog_rough_seed1/one_lever.sh
bash "$(dirname "$0")/../dog_rough_seed1/one_lever.sh" "$R" "$R/flat5" "${NET[@]}" --agent.algo.autocast bf16
