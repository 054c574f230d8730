#!/bin/bash
# BENCHMARKS §19: does left-right symmetry get the dog to its target sooner? One run at a time, in this
# order within each seed: no symmetry (the default), mirrored samples added to every minibatch, the
# mirror loss. Usage: bash measure.sh OUT_DIR [SEEDS...]
# (committed beside it as VARIANT_sSEED.json/.png, from OUT_DIR/ttt_VARIANT_sSEED/time_to_target.*)
D=${1:?output directory}; shift
mkdir -p "$D"
SEEDS=("$@"); [ ${#SEEDS[@]} -eq 0 ] && SEEDS=(0 1)
for s in "${SEEDS[@]}"; do
  for v in off augment loss; do
    canter bench time-to-target dog-flat --metric lin_vel_x_abs_error,lin_vel_y_abs_error --target 0.15 --minutes 5 \
        --eval-every 30 --episodes 256 --eval-envs 256 --seed "$s" --out "$D/ttt_${v}_s$s" --agent.algo.symmetry "$v"
  done
done
