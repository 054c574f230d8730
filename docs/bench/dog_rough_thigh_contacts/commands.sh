#!/bin/bash
# BENCHMARKS §6: dog-rough's terrain run with no penalty on thigh contacts (undesired_contacts weight 0, Isaac Lab's
# choice for its Go1 and A1 rough-terrain tasks; dog-rough's is legged_gym's -1.0) for 45 minutes, from
# ../dog_rough_bf16's flat5 (Adam state carried), seed 0; then the levels, the grid and the comparison with the
# defaults' two seeds. Usage: bash commands.sh DIR FLAT5
set -ex
canter train dog-rough --init-from "$2" --max-time 2700 --max-iterations 100000 --run-dir "$1/rough" --env.rewards.undesired-contacts.weight 0
python "$(dirname "$0")/../../../scripts/terrain_levels.py" "$1/rough" --out "$1/levels"
canter eval "$1/rough" --terrain-grid --num-envs 400 --episodes 400 --plot "$1/grid.png" --json > "$1/grid.json"
python "$(dirname "$0")/../dog_rough_seed1/against_seeds.py" "$1/levels" "undesired_contacts 0, seed 0" eased
