#!/bin/bash
# BENCHMARKS §6: the terrain hour of ../dog_rough_open (the defaults, seed 0) with the policy's height-scan noise at
# ±0.05 m instead of ±0.1 m (legged_gym's and Isaac Lab's figure, chosen for ANYmal; this dog stands 0.27 m and the
# stairs' risers are 5-18 cm), from the same 5-minute dog-flat run (../dog_rough_bf16's flat5, Adam state carried).
# Then the levels and the grid evaluation. Usage: bash commands.sh DIR FLAT5
set -ex
R=${1:-runs-rough-scan-noise}
mkdir -p "$R"
date
canter train dog-rough --init-from "$2" --max-time 3300 --max-iterations 100000 --run-dir "$R/rough55" \
  --env.observations.policy.terms.height-scan.noise.low -0.05 --env.observations.policy.terms.height-scan.noise.high 0.05
date
python "$(dirname "$0")/../../../scripts/terrain_levels.py" "$R/rough55" --out "$R/levels"
canter eval "$R/rough55" --terrain-grid --num-envs 400 --episodes 400 --plot "$R/grid55.png" --json > "$R/grid55.json"
