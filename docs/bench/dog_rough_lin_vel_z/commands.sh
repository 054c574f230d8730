#!/bin/bash
# BENCHMARKS §6: dog-rough's terrain run with a quarter of the vertical-velocity penalty (lin_vel_z weight -0.5;
# dog-rough's was legged_gym's and Isaac Lab's -2.0, which also taxes every climb onto a step), from
# ../dog_rough_bf16's flat5 (Adam state carried). Seed 0: 45 minutes, then the levels, the grid and the comparison
# with the defaults' two seeds. Seed 1: 30 minutes (the defaults' seed 1 ran 33), then its levels, in DIR/seed1.
# 55: seed 0's run resumed for 10 more minutes (55 on the terrain, the hour), its levels and grid in DIR/min55.
# 155: seed 1's run resumed for 25 more minutes (its hour), its levels and the comparison in DIR/seed1.
# Usage: bash commands.sh DIR FLAT5 [1|55|155]
set -ex
if [ "${3:-0}" = 55 ]; then
  canter train --resume "$1/rough" --max-time 600
  python "$(dirname "$0")/../../../scripts/terrain_levels.py" "$1/rough" --out "$1/min55"
  canter eval "$1/rough" --terrain-grid --num-envs 400 --episodes 400 --plot "$1/min55/grid.png" --json > "$1/min55/grid.json"
  exit 0
fi
if [ "${3:-0}" = 155 ]; then
  canter train --resume "$1/seed1/rough" --max-time 1500
  python "$(dirname "$0")/../../../scripts/terrain_levels.py" "$1/seed1/rough" --out "$1/seed1/levels"
  python "$(dirname "$0")/../dog_rough_seed1/against_seeds.py" "$1/seed1/levels" "lin_vel_z -0.5, seed 1" eased
  exit 0
fi
if [ "${3:-0}" = 1 ]; then
  canter train dog-rough --init-from "$2" --max-time 1800 --max-iterations 100000 --run-dir "$1/seed1/rough" --env.rewards.lin-vel-z.weight -0.5 --seed 1
  python "$(dirname "$0")/../../../scripts/terrain_levels.py" "$1/seed1/rough" --out "$1/seed1/levels"
  exit 0
fi
canter train dog-rough --init-from "$2" --max-time 2700 --max-iterations 100000 --run-dir "$1/rough" --env.rewards.lin-vel-z.weight -0.5
python "$(dirname "$0")/../../../scripts/terrain_levels.py" "$1/rough" --out "$1/levels"
canter eval "$1/rough" --terrain-grid --num-envs 400 --episodes 400 --plot "$1/grid.png" --json > "$1/grid.json"
python "$(dirname "$0")/../dog_rough_seed1/against_seeds.py" "$1/levels" "lin_vel_z -0.5, seed 0" eased
