#!/bin/bash
set -x
cd /work/main && . .venv/bin/activate
R=/work/runs-rough
date
canter train dog-flat --max-time 300 --max-iterations 100000 --run-dir $R/flat5 --agent.learn-threads 1
date
canter train dog-rough --init-from $R/flat5 --max-time 3300 --max-iterations 100000 --run-dir $R/rough55 --agent.learn-threads 1
date
