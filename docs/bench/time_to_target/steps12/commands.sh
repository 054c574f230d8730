#!/bin/bash
# BENCHMARKS §15: 1,024 envs with rollouts of 12 steps (the 12,288-sample batch and update rate per sample of
# 512 envs x 24, at 1,024 envs' stepping rate) against 512 envs x 24 steps, dog-flat, four seeds, alternated,
# one run at a time (2026-12-03, a 2-core Zen 4 EPYC, code of 38fa0ee, where dog-flat's rollout was 24 steps).
# Usage: bash commands.sh DIR
exec bash "$(dirname "$0")/../alternate.sh" "${1:-.}" \
    steps12 "--num-envs 1024 --agent.algo.num-steps-per-env 12" envs512 "--num-envs 512 --agent.algo.num-steps-per-env 24"
