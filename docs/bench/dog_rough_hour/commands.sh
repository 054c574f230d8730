#!/bin/bash
# BENCHMARKS §6: the terrain hour at dog-rough's default entropy bonus (0.0025), twice from the same 5-minute
# dog-flat run (../dog_rough_bf16's flat5): in bf16, as ../dog_rough_entropy's 22-minute run continued to 55
# terrain minutes (a resume; bitwise on the cpu backend, so the same as one uninterrupted run), and in float32
# with the learner on both cores (the defaults: no flags); then the float32 run continued to 120 minutes of
# training (115 on the terrain) and both of its checkpoints scored level by level.
# Usage: bash commands.sh DIR FLAT5 ENTROPY_RUN
# (ENTROPY_RUN: ../dog_rough_entropy's rough run directory, copied first so that its 22-minute state stays)
set -ex
R=${1:-runs-rough-hour}
FLAT=$2
LEVELS="$(dirname "$0")/../../../scripts/terrain_levels.py"
mkdir -p "$R"
cp -a "$3" "$R/bf16"
date
canter train --resume "$R/bf16" --max-time 1980
date
python "$LEVELS" "$R/bf16" --out "$R/bf16_levels"
date
canter train dog-rough --init-from "$FLAT" --max-time 3300 --max-iterations 100000 --run-dir "$R/fp32"
date
python "$LEVELS" "$R/fp32" --out "$R/fp32_levels"
cp -a "$R/fp32" "$R/fp32_120"
canter train --resume "$R/fp32_120" --max-time 3600
date
python "$LEVELS" "$R/fp32_120" --out "$R/fp32_120_levels"
canter eval "$R/fp32_120" --terrain-grid --num-envs 400 --episodes 400 --plot "$R/grid_120.png" --json > "$R/grid_120.json"
canter eval "$R/fp32" --terrain-grid --num-envs 400 --episodes 400 --plot "$R/grid_60.png" --json > "$R/grid_60.json"
