#!/bin/bash
# Usage, from the repository root with canter installed: bash docs/bench/hand/tilt30/commands.sh DIR LS
# (LS: the DIR given to ../line_search/commands.sh, which holds ls50s1/run; this writes DIR/tilt30)
HERE=$(dirname "$0")
R=${1:?usage: bash docs/bench/hand/tilt30/commands.sh DIR LS}
LS=${2:?usage: bash docs/bench/hand/tilt30/commands.sh DIR LS (LS: the DIR of ../line_search/commands.sh)}
# 2026-11-28, AMD EPYC (2 cores, AVX2), one training at a time (four niced probe runs of ~30 s ran during the
# last 10 minutes). The tilt curriculum, then the default of hand-cube (code of 7493a12; since d278a2b
# the task hand-cube-tilt), from the 30-minute hand-cube-axis policy of ../line_search (seed 1):
canter bench time-to-target hand-cube --metric consecutive_successes_mean --target 5 --minutes 30 --eval-every 900 \
    --init-from "$LS/ls50s1/run" --out "$R/tilt30" --save-dir "$R/tilt30/run"
# on today's code: the same with hand-cube-tilt in place of hand-cube.
# the source policy before any training, 600 steps of 64 envs at the curriculum's start (range 0) and
# in hand-cube-axis at range 1.7 (deterministic, then sampled actions):
python "$HERE/probe.py" "$LS/ls50s1/run" hand-cube-tilt ; python "$HERE/probe.py" "$LS/ls50s1/run" hand-cube-tilt s
python "$HERE/probe.py" "$LS/ls50s1/run" hand-cube-axis ; python "$HERE/probe.py" "$LS/ls50s1/run" hand-cube-axis s
