#!/bin/bash
# BENCHMARKS §15 (the Xeon paragraphs): cartpole's time to 95 % of its best return over seeds, one run at a time.
# Usage: bash sweep.sh DIR NAME "FLAGS" SEED [SEED ...]; copy DIR/NAME_sS/time_to_target.json here as NAME_sS.json,
# then python table.py. Run on 2026-12-06 (code of 8224518) as
#   bash sweep.sh DIR kl01 "--agent.algo.desired-kl 0.01" 0 1 2 3 4 5 6 7   (run as NAME default, no flags, when 0.01 was the default)
#   bash sweep.sh DIR ent0 "--agent.algo.entropy-coef 0" 0 1 2 3 4 5 6 7
#   bash sweep.sh DIR std05 "--agent.policy.init-noise-std 0.5" 0 1 2 3 4 5 6 7
#   bash sweep.sh DIR kl02 "--agent.algo.desired-kl 0.02" 0 1 2 3 4 5 6 7   (cartpole's default since)
# and on 2026-12-07 (src/ as at b7bafd8), the defaults evaluated every second instead of every two:
#   EVERY=1 bash sweep.sh DIR kl02e1 "" 0 1 2 3 4 5 6 7
set -e
dir=$1; name=$2; flags=$3; shift 3
mkdir -p "$dir" && cd "$dir"
for s in "$@"; do
  # shellcheck disable=SC2086  # the flags are words
  canter bench time-to-target cartpole --metric mean_return --target 4.75 --minutes 1 --eval-every "${EVERY:-2}" --episodes 256 \
    --eval-envs 256 --stop-at-target --seed "$s" $flags --out "${name}_s$s"
done
