#!/bin/bash
# 2026-11-28, AMD EPYC (2 cores, AVX2), code of 1fffe70 (relative finger targets, the default), nothing else running
# Usage, from the repository root with canter installed: bash docs/bench/hand/so3_rel60/commands.sh DIR
R=${1:?usage: bash docs/bench/hand/so3_rel60/commands.sh DIR}
mkdir -p "$R"
canter bench time-to-target hand-cube --metric consecutive_successes_mean --target 5 --minutes 60 --eval-every 900 --out "$R/so3rel60" --save-dir "$R/so3rel60/run" > "$R/so3rel60.log" 2>&1
