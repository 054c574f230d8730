#!/bin/bash
# BENCHMARKS §6: dog-rough's warm-start recipe (../dog_rough_entry/commands.sh) with the terrain hour at
# desired_kl 0.02 instead of the task's 0.01 (24 steps per update, the task's own; 2026-12-04, a 2-core Zen 4
# EPYC, code of 0b0dbc6, where dog-flat's defaults are 12 steps and desired_kl 0.02, so the flat warm start
# uses them). Usage: bash commands.sh DIR
set -ex
R=${1:-runs-rough-kl02}
date
canter train dog-flat --max-time 300 --max-iterations 100000 --run-dir "$R/flat5" --agent.learn-threads 1
date
canter train dog-rough --init-from "$R/flat5" --max-time 3300 --max-iterations 100000 --run-dir "$R/rough55" \
    --agent.learn-threads 1 --agent.algo.desired-kl 0.02
date
python "$(dirname "$0")/../../../scripts/terrain_levels.py" "$R/rough55" --out "$R/levels"
