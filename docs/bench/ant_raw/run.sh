#!/bin/bash
# issue 14's ant figure: Canter's side of bench sb3 for 15 minutes, its frames/s against raw Batch before
# training, after it on random controls, and on the trained ant's own states.
. /work/main/.venv/bin/activate
export PYTHONPATH=/work/wt-ant/src
cd /work/runs-ant
while [ ! -e /work/runs-dr2/after_done ]; do sleep 5; done
date -u > started
canter bench sb3 --minutes 15 --no-sb3 --out out > sb3.log 2>&1
echo "rc=$?" >> sb3.log
date -u > done
