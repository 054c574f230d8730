#!/bin/bash
# BENCHMARKS §6: dog-rough's terrain run (friction and pushes, the defaults since 30049fd) with 8 minibatches per epoch
# instead of 4 (twice the gradient steps per iteration at about the same cost on two cores, §15), for the 35 minutes the
# session had left, from ../dog_rough_bf16's flat5 (Adam state carried), seed 0; then the levels and the comparison
# with the defaults' two seeds. Usage: bash commands.sh DIR FLAT5
set -ex
canter train dog-rough --init-from "$2" --max-time 2100 --max-iterations 100000 --run-dir "$1/rough" --agent.algo.num-mini-batches 8
python "$(dirname "$0")/../../../scripts/terrain_levels.py" "$1/rough" --out "$1/levels"
python "$(dirname "$0")/../dog_rough_seed1/against_seeds.py" "$1/levels" "8 minibatches, seed 0" eased
