#!/bin/bash
# BENCHMARKS §6: the terrain hour of ../dog_rough_open (the defaults, seed 0) with no tilt ending (bad_orientation's
# limit at 3.2 rad, over pi: off), as legged_gym and Isaac Lab's rough-terrain tasks have it (time out and the trunk
# touching end an episode; the task's own ending at a 1-rad tilt took 30-37 % of the grid's episodes, most of them
# sideways roll-overs on steps and boxes), from a 280-iteration dog-flat run (../dog_rough_bf16's flat5, Adam state
# carried). The measured hour was stopped at 32 minutes (SIGINT: checkpoint kept), its level flat at 2.1 since minute 10;
# then scripts/terrain_levels.py on it, and its grids with and without --task dog-rough (the task's 1-rad ending).
# Usage: bash commands.sh DIR FLAT5
# (then the levels and the grid evaluation: ../dog_rough_seed1/one_lever.sh)
exec bash "$(dirname "$0")/../dog_rough_seed1/one_lever.sh" "${1:-runs-rough-tilt-off}" "$2" \
  --env.terminations.bad-orientation.params.limit-angle 3.2
