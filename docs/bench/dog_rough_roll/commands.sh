#!/bin/bash
# BENCHMARKS §6: the terrain hour of ../dog_rough_open (the defaults, seed 0) with a sideways-tilt penalty,
# body_roll at -2.5 (the squared lateral gravity in the body frame: dog-flat's flat_orientation weight on the
# roll part alone, pitch left free for steps), from the same 5-minute dog-flat run (../dog_rough_bf16's flat5,
# Adam state carried). Then the levels and the grid evaluation. Usage: bash commands.sh DIR FLAT5
set -ex
R=${1:-runs-rough-roll}
mkdir -p "$R"
date
canter train dog-rough --init-from "$2" --max-time 3300 --max-iterations 100000 --run-dir "$R/rough55" \
  --env.rewards.body-roll.weight -2.5
date
python "$(dirname "$0")/../../../scripts/terrain_levels.py" "$R/rough55" --out "$R/levels"
canter eval "$R/rough55" --terrain-grid --num-envs 400 --episodes 400 --plot "$R/grid55.png" --json > "$R/grid55.json"
