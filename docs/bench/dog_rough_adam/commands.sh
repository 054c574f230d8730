#!/bin/bash
# BENCHMARKS §6: ../dog_rough_bf16's terrain hour with the flat policy's Adam state carried into the grown network
# (`--init-from` since this commit: the source's moments, step counts and adaptive rate; the new height-scan
# columns' moments at zero), warm-started from the same 5-minute dog-flat run, so that the two hours differ in
# the optimizer's start alone. Usage: bash commands.sh DIR FLAT5 (FLAT5: the flat run of ../dog_rough_bf16;
# without it, a new one is trained first)
set -ex
R=${1:-runs-rough-adam}
FLAT=${2:-}
date
if [ -z "$FLAT" ]; then
    FLAT="$R/flat5"
    canter train dog-flat --max-time 300 --max-iterations 100000 --run-dir "$FLAT"
    date
fi
canter train dog-rough --init-from "$FLAT" --max-time 3300 --max-iterations 100000 --run-dir "$R/rough55" \
    --agent.algo.autocast bf16
date
python "$(dirname "$0")/../../../scripts/terrain_levels.py" "$R/rough55" --out "$R/levels"
