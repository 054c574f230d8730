#!/bin/bash
# BENCHMARKS §6: the terrain hour of ../dog_rough_open (the defaults) again with --seed 1, from the same 5-minute
# dog-flat run (../dog_rough_bf16's flat5, Adam state carried): how far two seeds of one recipe end apart, the
# yardstick for every one-seed lever in §6. Then the levels and the grid evaluation.
# Usage: bash commands.sh DIR FLAT5
set -ex
R=${1:-runs-rough-seed1}
mkdir -p "$R"
date
canter train dog-rough --init-from "$2" --max-time 3300 --max-iterations 100000 --run-dir "$R/rough55" --seed 1
date
python "$(dirname "$0")/../../../scripts/terrain_levels.py" "$R/rough55" --out "$R/levels"
canter eval "$R/rough55" --terrain-grid --num-envs 400 --episodes 400 --plot "$R/grid55.png" --json > "$R/grid55.json"
