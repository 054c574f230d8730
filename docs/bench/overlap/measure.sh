#!/usr/bin/env bash
# Issue 14's overlap lever, side by side: serial and overlapped training alternating, one at a time.
# Usage: bash docs/bench/overlap/measure.sh OUT_DIR
set -euo pipefail
out=${1:?OUT_DIR}
mkdir -p "$out"
for rep in 1 2; do
  canter bench train dog-flat --max-time 60 --json > "$out/dog_serial_$rep.json"
  canter bench train dog-flat --max-time 60 --json --agent.overlap > "$out/dog_overlap_$rep.json"
done
