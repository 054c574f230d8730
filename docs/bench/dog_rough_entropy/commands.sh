#!/bin/bash
# BENCHMARKS §6: ../dog_rough_adam's terrain run (the flat policy's Adam state carried over, the update in bf16)
# with the entropy bonus at a quarter of rsl_rl's 0.01 (--agent.algo.entropy-coef 0.0025), from the same 5-minute
# dog-flat run, so that the two differ in this flag alone; stopped after SECONDS of terrain training.
# Usage: bash commands.sh DIR FLAT5 [SECONDS] (FLAT5: the flat run of ../dog_rough_bf16)
set -ex
R=${1:-runs-rough-entropy}
FLAT=$2
SECONDS_ON_TERRAIN=${3:-1500}
date
canter train dog-rough --init-from "$FLAT" --max-time "$SECONDS_ON_TERRAIN" --max-iterations 100000 --run-dir "$R/rough" \
    --agent.algo.autocast bf16 --agent.algo.entropy-coef 0.0025
date
python "$(dirname "$0")/../../../scripts/terrain_levels.py" "$R/rough" --out "$R/levels"
