#!/bin/bash
# BENCHMARKS §6: the terrain hour of ../dog_rough_open (the defaults, seed 0) with the adaptive schedule's
# desired_kl at 0.04 instead of 0.02 (0.01 -> 0.02 had taken the level at 13.2 M terrain steps from 1.22 to 2.03;
# at 0.02 the learning rate sits at 4-6e-4, far under its 1e-2 cap), from the same 5-minute dog-flat run
# (../dog_rough_bf16's flat5, Adam state carried).
# Usage: bash commands.sh DIR FLAT5
# (then the levels and the grid evaluation: ../dog_rough_seed1/one_lever.sh)
exec bash "$(dirname "$0")/../dog_rough_seed1/one_lever.sh" "${1:-runs-rough-kl04}" "$2" \
  --agent.algo.desired-kl 0.04
