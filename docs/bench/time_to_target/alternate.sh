#!/bin/bash
# Alternates dog-flat time-to-target runs of two or more variants over seeds 0-3, one run at a time, into
# DIR/ttt_{name}_s{seed}. Usage: [SEEDS="0 1"] bash alternate.sh DIR NAME "FLAGS" [NAME "FLAGS" ...]
# (the commands.sh of envs512/, minibatch8/ and steps12/ call it; the table.py beside each reads the JSON).
set -e
dir=${1:-.}; shift
mkdir -p "$dir" && cd "$dir"
for s in ${SEEDS:-0 1 2 3}; do
  args=("$@")
  for ((i = 0; i < ${#args[@]}; i += 2)); do
    name=${args[i]}; flags=${args[i+1]}
    echo "== $name s$s $(date)"
    # shellcheck disable=SC2086  # the flags are words
    canter bench time-to-target dog-flat --metric lin_vel_x_abs_error,lin_vel_y_abs_error --target 0.15 --minutes 5 \
        --eval-every 30 --episodes 256 --eval-envs 256 --seed $s $flags --out ttt_${name}_s$s
  done
done
echo "== all done $(date)"
