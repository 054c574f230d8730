#!/bin/bash
# BENCHMARKS §15: 1,024 envs with rollouts of 8 steps (8,192 samples per update, 1.5 times as many updates per
# env step) against the dog-flat default of 12, four seeds, alternated, one run at a time (2026-12-04, a 2-core
# Zen 4 EPYC, code of c759a1f). Usage: bash commands.sh DIR
exec bash "$(dirname "$0")/../alternate.sh" "${1:-.}" \
    steps8 "--num-envs 1024 --agent.algo.num-steps-per-env 8" steps12 "--num-envs 1024 --agent.algo.num-steps-per-env 12"
