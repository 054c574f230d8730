#!/bin/bash
# BENCHMARKS §6: one terrain hour of ../dog_rough_open's recipe (the defaults, seed 0) with extra train flags (a lever,
# or --seed 1), from a 5-minute dog-flat run (../dog_rough_bf16's flat5, Adam state carried); then the levels and the
# grid evaluation, all under DIR. Each lever's commands.sh calls this with its flags; compare the result with the two
# seeds of the defaults by against_seeds.py. Usage: bash one_lever.sh DIR FLAT5 [FLAG...]
set -ex
R=$1
FLAT=$2
shift 2
mkdir -p "$R"
date
canter train dog-rough --init-from "$FLAT" --max-time 3300 --max-iterations 100000 --run-dir "$R/rough55" "$@"
date
python "$(dirname "$0")/../../../scripts/terrain_levels.py" "$R/rough55" --out "$R/levels"
canter eval "$R/rough55" --terrain-grid --num-envs 400 --episodes 400 --plot "$R/grid55.png" --json > "$R/grid55.json"
