#!/bin/bash
# BENCHMARKS §6: the float32 terrain hour (the defaults) on stepping stones measured on the collision surface (commit
# c3fb26d), from the same 5-minute dog-flat run as ../dog_rough_hour (../dog_rough_bf16's flat5, Adam state carried);
# then the new run and ../dog_rough_hour's 60-minute policy (trained on the old stones) both scored block by block on
# the new terrain, so that what the terrain gives and what the training gives are told apart; then the new run
# continued for 60 more minutes on a copy (120 minutes of training) and scored the same way.
# Usage: bash commands.sh DIR FLAT5 OLD_RUN   (OLD_RUN: ../dog_rough_hour's fp32 run directory)
set -ex
R=${1:-runs-rough-open}
FLAT=$2
LEVELS="$(dirname "$0")/../../../scripts/terrain_levels.py"
mkdir -p "$R"
date
canter train dog-rough --init-from "$FLAT" --max-time 3300 --max-iterations 100000 --run-dir "$R/rough55"
date
python "$LEVELS" "$R/rough55" --out "$R/levels"
canter eval "$R/rough55" --terrain-grid --num-envs 400 --episodes 400 --plot "$R/grid55.png" --json > "$R/grid55.json"
canter eval "$3" --terrain-grid --num-envs 400 --episodes 400 --plot "$R/grid_old_policy.png" --json > "$R/grid_old_policy.json"
cp -a "$R/rough55" "$R/rough115"
canter train --resume "$R/rough115" --max-time 3600
date
python "$LEVELS" "$R/rough115" --out "$R/levels115"
canter eval "$R/rough115" --terrain-grid --num-envs 400 --episodes 400 --plot "$R/grid115.png" --json > "$R/grid115.json"
