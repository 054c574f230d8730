#!/bin/bash
# the same 15-minute ant run with the learner in bfloat16 (BENCHMARKS §5; copied here as canter_15min_bf16.*).
# Usage: bash bf16.sh DIR, right after run.sh, with nothing else on the machine.
set -e
canter bench sb3 --minutes 15 --no-sb3 --out "${1:-.}" --agent.algo.autocast bf16
