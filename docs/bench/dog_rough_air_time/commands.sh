#!/bin/bash
# BENCHMARKS §6: dog-rough's terrain run (friction and pushes, the defaults since 30049fd) with the feet_air_time reward
# at legged_gym's weight 1.0 instead of 0.25 (a swing of more than 0.5 s pays more: longer, higher steps) for the 30 minutes
# the session had left, from ../dog_rough_bf16's flat5 (Adam state carried), seed 0; then the levels, the grid and the
# comparison with the defaults' two seeds. Usage: bash commands.sh DIR FLAT5
set -ex
canter train dog-rough --init-from "$2" --max-time 1800 --max-iterations 100000 --run-dir "$1/rough" --env.rewards.feet-air-time.weight 1.0
python "$(dirname "$0")/../../../scripts/terrain_levels.py" "$1/rough" --out "$1/levels"
canter eval "$1/rough" --terrain-grid --num-envs 400 --episodes 400 --plot "$1/grid.png" --json > "$1/grid.json"
python "$(dirname "$0")/../dog_rough_seed1/against_seeds.py" "$1/levels" "feet_air_time 1.0, seed 0" eased
