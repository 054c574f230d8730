#!/bin/bash
# BENCHMARKS §6: the terrain hour of ../dog_rough_open (the defaults) again with --seed 1, from the same 5-minute
# dog-flat run (../dog_rough_bf16's flat5, Adam state carried): how far two seeds of one recipe end apart, the
# yardstick for every one-seed lever in §6.
# Usage: bash commands.sh DIR FLAT5
# (then the levels and the grid evaluation: ../dog_rough_seed1/one_lever.sh)
exec bash "$(dirname "$0")/../dog_rough_seed1/one_lever.sh" "${1:-runs-rough-seed1}" "$2" --seed 1
