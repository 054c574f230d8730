#!/bin/bash
# BENCHMARKS §6: the terrain hour of ../dog_rough_open (the defaults, seed 0) with a sideways-tilt penalty,
# body_roll at -2.5 (the squared lateral gravity in the body frame: dog-flat's flat_orientation weight on the
# roll part alone, pitch left free for steps), from the same 5-minute dog-flat run (../dog_rough_bf16's flat5,
# Adam state carried). Usage: bash commands.sh DIR FLAT5
# (then the levels and the grid evaluation: ../dog_rough_seed1/one_lever.sh)
exec bash "$(dirname "$0")/../dog_rough_seed1/one_lever.sh" "${1:-runs-rough-roll}" "$2" \
  --env.rewards.body-roll.weight -2.5
