#!/bin/bash
# BENCHMARKS §6: the terrain hour of ../dog_rough_open (the defaults, seed 0) with the tilt ending at 0.8 rad instead of
# the task's 1.0 (bad_orientation's limit_angle; with no tilt ending at all the hour stalled at level 2.1:
# ../dog_rough_tilt_off), from a 280-iteration dog-flat run (../dog_rough_bf16's flat5, Adam state carried).
# Usage: bash commands.sh DIR FLAT5
# (then the levels and the grid evaluation: ../dog_rough_seed1/one_lever.sh)
exec bash "$(dirname "$0")/../dog_rough_seed1/one_lever.sh" "${1:-runs-rough-tilt08}" "$2" \
  --env.terminations.bad-orientation.params.limit-angle 0.8
