#!/bin/bash
# BENCHMARKS §6: dog-rough's terrain run on a 0.05 m heightfield (--env.terrain.horizontal-scale 0.05; the default
# 0.1 m turns every stair riser into a 0.1 m ramp and rounds the stones' gaps to whole 0.1 m cells) for 45 minutes,
# from ../dog_rough_bf16's flat5 (Adam state carried), seed 0; then the levels, the grid on its own terrain and on
# the registered 0.1 m terrain (--task dog-rough), and the comparison with the defaults' two seeds.
# Usage: bash commands.sh DIR FLAT5
set -ex
canter train dog-rough --init-from "$2" --max-time 2700 --max-iterations 100000 --run-dir "$1/rough" --env.terrain.horizontal-scale 0.05
python "$(dirname "$0")/../../../scripts/terrain_levels.py" "$1/rough" --out "$1/levels"
canter eval "$1/rough" --terrain-grid --num-envs 400 --episodes 400 --plot "$1/grid.png" --json > "$1/grid.json"
canter eval "$1/rough" --task dog-rough --terrain-grid --num-envs 400 --episodes 400 --plot "$1/grid_01.png" --json > "$1/grid_01.json"
python "$(dirname "$0")/../dog_rough_seed1/against_seeds.py" "$1/levels" "0.05 m heightfield, seed 0" eased
