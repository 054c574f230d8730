#!/bin/bash
# BENCHMARKS §15: dog-flat's default (1,024 envs x 12 steps, desired_kl 0.02 since 90e5ff3) against desired_kl
# 0.04, seeds 0 and 1 alternated, one run at a time (2026-12-04, a 2-core Zen 4 EPYC, code of 0b0dbc6).
# Usage: bash commands.sh DIR
SEEDS="0 1" exec bash "$(dirname "$0")/../alternate.sh" "${1:-.}" kl04 "--num-envs 1024 --agent.algo.desired-kl 0.04" \
    kl02 "--num-envs 1024"
