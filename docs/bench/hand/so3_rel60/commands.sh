#!/bin/bash
# 2026-11-28, AMD EPYC (2 cores, AVX2), code of 1fffe70 (relative finger targets, the default), nothing else running
. /work/main/.venv/bin/activate
cd /work/runs-hand-so3-rel
canter bench time-to-target hand-cube --metric consecutive_successes_mean --target 5 --minutes 60 --eval-every 900 --out /work/runs-hand-so3-rel/so3rel60 --save-dir /work/runs-hand-so3-rel/so3rel60/run > so3rel60.log 2>&1
