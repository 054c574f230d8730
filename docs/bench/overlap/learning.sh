#!/usr/bin/env bash
# Does the one-update lag cost learning? dog-flat time to target, serial then overlapped, one at a time.
# Usage: bash docs/bench/overlap/learning.sh OUT_DIR [MINUTES]
set -euo pipefail
out=${1:?OUT_DIR}
minutes=${2:-14}
mkdir -p "$out"
common=(dog-flat --metric lin_vel_x_abs_error,lin_vel_y_abs_error --target 0.15 --minutes "$minutes"
        --eval-every 120 --episodes 256 --eval-envs 256)
canter bench time-to-target "${common[@]}" --out "$out/serial"
canter bench time-to-target "${common[@]}" --out "$out/overlap" --agent.overlap
