#!/bin/bash
# BENCHMARKS §15: 1,024 envs with 8 minibatches (the gradient steps per sample of 512 envs x 4) against the
# default 4, dog-flat, four seeds, alternated, one run at a time (2026-12-03, a 2-core Zen 4 EPYC, code of cdcedd3).
# Usage: bash commands.sh DIR
exec bash "$(dirname "$0")/../alternate.sh" "${1:-.}" \
    mb4 "--num-envs 1024 --agent.algo.num-steps-per-env 24 --agent.algo.num-mini-batches 4" \
    mb8 "--num-envs 1024 --agent.algo.num-steps-per-env 24 --agent.algo.num-mini-batches 8"
