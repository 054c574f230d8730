#!/bin/bash
# BENCHMARKS §6: the terrain hour with dog-rough's feet_clearance term on (weight -20: a swing foot's centre
# lifted to 10 cm above the ground under it), from the same 5-minute dog-flat run as ../dog_rough_open
# (../dog_rough_bf16's flat5, Adam state carried); then the levels, the grid evaluation, and the swing heights
# of the new policy and of ../dog_rough_open's 60-minute policy on three rows (swing.py).
# Usage: bash commands.sh DIR FLAT5 OPEN_RUN   (OPEN_RUN: ../dog_rough_open's 60-minute run directory)
set -ex
R=${1:-runs-rough-clearance}
FLAT=$2
HERE="$(dirname "$0")"
LEVELS="$HERE/../../../scripts/terrain_levels.py"
mkdir -p "$R"
date
canter train dog-rough --init-from "$FLAT" --max-time 3300 --max-iterations 100000 --run-dir "$R/rough55" \
  --env.rewards.feet-clearance.weight -20
date
python "$LEVELS" "$R/rough55" --out "$R/levels"
canter eval "$R/rough55" --terrain-grid --num-envs 400 --episodes 400 --plot "$R/grid55.png" --json > "$R/grid55.json"
for run in "$R/rough55" "$3"; do
  for block in "flat 0" "stairs_down 3" "stairs_up 3" "obstacles 3"; do
    python "$HERE/swing.py" "$run" $block
  done
done | tee "$R/swing.txt"
