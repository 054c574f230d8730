#!/bin/bash
# 2026-11-28, AMD EPYC (2 cores, AVX2), one training at a time (four niced probe runs of ~30 s ran during the
# last 10 minutes). The tilt curriculum, then the default of hand-cube (code of 7493a12; since d278a2b
# the task hand-cube-tilt), from the 30-minute hand-cube-axis policy of ../line_search (seed 1):
canter bench time-to-target hand-cube --metric consecutive_successes_mean --target 5 --minutes 30 --eval-every 900 \
    --init-from /work/runs-hand-ls/ls50s1/run --out /work/runs-hand-tilt/tilt30 --save-dir /work/runs-hand-tilt/tilt30/run
# on today's code: the same with hand-cube-tilt in place of hand-cube.
# the source policy before any training, 600 steps of 64 envs at the curriculum's start (range 0) and
# in hand-cube-axis at range 1.7 (deterministic, then sampled actions):
python probe.py hand-cube-tilt ; python probe.py hand-cube-tilt s
python probe.py hand-cube-axis ; python probe.py hand-cube-axis s
