#!/bin/bash
# BENCHMARKS §6: dog-rough's terrain run (friction and pushes, the defaults since 30049fd) with no entropy bonus
# (--agent.algo.entropy-coef 0, against the default 0.0025, a quarter of rsl_rl's 0.01) for the 40 minutes the session
# had left, from ../dog_rough_bf16's flat5 (Adam state carried), seed 0; then the levels, the grid and the comparison
# with the defaults' two seeds. Usage: bash commands.sh DIR FLAT5
set -ex
canter train dog-rough --init-from "$2" --max-time 2400 --max-iterations 100000 --run-dir "$1/rough" --agent.algo.entropy-coef 0
python "$(dirname "$0")/../../../scripts/terrain_levels.py" "$1/rough" --out "$1/levels"
canter eval "$1/rough" --terrain-grid --num-envs 400 --episodes 400 --plot "$1/grid.png" --json > "$1/grid.json"
python "$(dirname "$0")/../dog_rough_seed1/against_seeds.py" "$1/levels" "entropy 0, seed 0" eased
