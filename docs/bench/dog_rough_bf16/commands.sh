#!/bin/bash
# BENCHMARKS §6: dog-rough's warm-start hour (../dog_rough_kl02/commands.sh) with the learner given both
# cores (the default; the earlier recipes pinned it to one with --agent.learn-threads 1) and the terrain
# hour's update in bfloat16 (--agent.algo.autocast bf16). Usage: bash commands.sh DIR
set -ex
R=${1:-runs-rough-bf16}
date
canter train dog-flat --max-time 300 --max-iterations 100000 --run-dir "$R/flat5"
date
canter train dog-rough --init-from "$R/flat5" --max-time 3300 --max-iterations 100000 --run-dir "$R/rough55" \
    --agent.algo.autocast bf16
date
python "$(dirname "$0")/../../../scripts/terrain_levels.py" "$R/rough55" --out "$R/levels"
