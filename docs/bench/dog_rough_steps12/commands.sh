#!/bin/bash
# BENCHMARKS §6: dog-rough's warm-start recipe (../dog_rough_entry/commands.sh) with the terrain hour rolling out
# 12 steps per update instead of the task's 24 (2026-12-04, a 2-core Zen 4 EPYC, code of c759a1f, where
# dog-flat's default is 12 steps, so the flat warm start is a 12-step run as well). Usage: bash commands.sh DIR
set -ex
R=${1:-runs-rough12}
date
canter train dog-flat --max-time 300 --max-iterations 100000 --run-dir "$R/flat5" --agent.learn-threads 1
date
canter train dog-rough --init-from "$R/flat5" --max-time 3300 --max-iterations 100000 --run-dir "$R/rough55" \
    --agent.learn-threads 1 --agent.algo.num-steps-per-env 12
date
python "$(dirname "$0")/../../../scripts/terrain_levels.py" "$R/rough55" --out "$R/levels"
