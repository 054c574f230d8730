#!/bin/bash
# issue 14's ant figure (BENCHMARKS §5): Canter's side of bench sb3 for 15 minutes, its frames/s against raw Batch
# before training, after it on random controls, and on the trained ant's own states. Usage: bash run.sh DIR
# (writes DIR/sb3_15min.json and .png, copied here as canter_15min.json / .png, and canter_15min_xeon.* for the
# Intel Xeon run of 2026-12-06). Run it with nothing else on the machine.
set -e
canter bench sb3 --minutes 15 --no-sb3 --out "${1:-.}"
