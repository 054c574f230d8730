#!/bin/bash
# BENCHMARKS §6: dog-rough's terrain hour with the episode cut (a truncation) once the dog has walked out of its block,
# where terrain_levels promotes it (--env.terminations.walked-out.params.factor 1), from ../dog_rough_bf16's flat5
# (Adam state carried). Seed 0: 55 minutes (the hour), then the levels, the grid and the comparison with the
# defaults' two seeds. Seed 1: 30 minutes, then its levels and the comparison, in DIR/seed1. 120: seed 0's run, copied
# to DIR/rough120 and resumed for 65 more minutes (120 on the terrain, bitwise one uninterrupted run), then its levels
# and grid in DIR/min120.
# 155: seed 1's run resumed for 25 more minutes (its hour), its levels, the comparison and its grid in DIR/seed1.
# Usage: bash commands.sh DIR FLAT5 [1|120|155]
set -ex
S="$(dirname "$0")/../../../scripts/terrain_levels.py"
C="$(dirname "$0")/../dog_rough_seed1/against_seeds.py"
if [ "${3:-0}" = 1 ]; then
  canter train dog-rough --init-from "$2" --max-time 1800 --max-iterations 100000 --run-dir "$1/seed1/rough" --env.terminations.walked-out.params.factor 1 --seed 1
  python "$S" "$1/seed1/rough" --out "$1/seed1/levels"
  python "$C" "$1/seed1/levels" "walked-out cut, seed 1" eased
  exit 0
fi
if [ "${3:-0}" = 155 ]; then
  canter train --resume "$1/seed1/rough" --max-time 1500
  python "$S" "$1/seed1/rough" --out "$1/seed1/levels"
  python "$C" "$1/seed1/levels" "walked-out cut, seed 1" eased
  canter eval "$1/seed1/rough" --terrain-grid --num-envs 400 --episodes 400 --plot "$1/seed1/grid.png" --json > "$1/seed1/grid.json"
  exit 0
fi
if [ "${3:-0}" = 120 ]; then
  cp -r "$1/rough" "$1/rough120"
  canter train --resume "$1/rough120" --max-time 3900
  python "$S" "$1/rough120" --out "$1/min120"
  canter eval "$1/rough120" --terrain-grid --num-envs 400 --episodes 400 --plot "$1/min120/grid.png" --json > "$1/min120/grid.json"
  exit 0
fi
canter train dog-rough --init-from "$2" --max-time 3300 --max-iterations 100000 --run-dir "$1/rough" --env.terminations.walked-out.params.factor 1
python "$S" "$1/rough" --out "$1/levels"
canter eval "$1/rough" --terrain-grid --num-envs 400 --episodes 400 --plot "$1/grid.png" --json > "$1/grid.json"
python "$C" "$1/levels" "walked-out cut, seed 0" eased
