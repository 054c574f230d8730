#!/bin/bash
# BENCHMARKS §15: 512 envs against the default 1,024 on dog-flat, four seeds, alternated, one run at a time
# (2026-12-03, a 2-core Zen 4 EPYC, code of 0bc08af). Usage: bash commands.sh DIR
exec bash "$(dirname "$0")/../alternate.sh" "${1:-.}" \
    envs1024 "--num-envs 1024 --agent.algo.num-steps-per-env 24" envs512 "--num-envs 512 --agent.algo.num-steps-per-env 24"
