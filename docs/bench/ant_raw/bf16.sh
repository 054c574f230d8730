#!/bin/bash
# the same 15-minute ant run with the learner in bfloat16
. /work/main/.venv/bin/activate
export PYTHONPATH=/work/wt-ant/src
cd /work/runs-ant
date -u > bf16_started
canter bench sb3 --minutes 15 --no-sb3 --out out_bf16 --agent.algo.autocast bf16 > bf16.log 2>&1
echo "rc=$?" >> bf16.log
date -u > bf16_done
