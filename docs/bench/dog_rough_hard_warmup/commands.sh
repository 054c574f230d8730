#!/bin/bash
# BENCHMARKS §6: a warm-up on the two terrain types that hold dog-rough's mean level (the pits, stairs_down, and the
# stepping stones; half the columns each, the same rows), 15 minutes, then dog-rough's defaults for 40 minutes: the
# 55 terrain minutes of one_lever.sh, from ../dog_rough_bf16's flat5 (Adam state carried through both phases), seed 0;
# then the levels of both phases, the grid, and the second phase against the defaults' two seeds (against_seeds.py:
# its steps and minutes counted on from the warm-up's). Usage: bash commands.sh DIR FLAT5
set -ex
HARD=()
for t in flat rough slope-up slope-down stairs-up obstacles; do HARD+=(--env.terrain.sub-terrains.$t.proportion 0); done
HARD+=(--env.terrain.sub-terrains.stairs-down.proportion 0.5 --env.terrain.sub-terrains.stepping-stones.proportion 0.5)
canter train dog-rough --init-from "$2" --max-time 900 --max-iterations 100000 --run-dir "$1/warmup" "${HARD[@]}"
canter train dog-rough --init-from "$1/warmup" --max-time 2400 --max-iterations 100000 --run-dir "$1/rough"
S=$(dirname "$0")/../../../scripts/terrain_levels.py
python "$S" "$1/warmup" --out "$1/levels_warmup"
python "$S" "$1/rough" --out "$1/levels"
canter eval "$1/rough" --terrain-grid --num-envs 400 --episodes 400 --plot "$1/grid.png" --json > "$1/grid.json"
python "$(dirname "$0")/against_seeds.py" "$1"
