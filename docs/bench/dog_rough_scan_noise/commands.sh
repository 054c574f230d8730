#!/bin/bash
# BENCHMARKS §6: the terrain hour of ../dog_rough_open (the defaults, seed 0) with the policy's height-scan noise at
# ±0.05 m instead of ±0.1 m (legged_gym's and Isaac Lab's figure, chosen for ANYmal; this dog stands 0.27 m and the
# stairs' risers are 5-18 cm), from the same 5-minute dog-flat run (../dog_rough_bf16's flat5, Adam state carried).
# Usage: bash commands.sh DIR FLAT5
# (then the levels and the grid evaluation: ../dog_rough_seed1/one_lever.sh)
exec bash "$(dirname "$0")/../dog_rough_seed1/one_lever.sh" "${1:-runs-rough-scan-noise}" "$2" \
  --env.observations.policy.terms.height-scan.noise.low -0.05 \
  --env.observations.policy.terms.height-scan.noise.high 0.05
