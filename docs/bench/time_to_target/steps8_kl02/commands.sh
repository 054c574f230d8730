#!/bin/bash
# BENCHMARKS §15: dog-flat with 8-step rollouts at the default desired_kl 0.02 (1,024 envs), seeds 0 and 1, one run
# at a time (2026-12-04, a 2-core Zen 4 EPYC, code of 8753825); set against the default's (12 steps) runs of the same
# seeds in ../kl04 (the same machine, the hour before). Usage: bash commands.sh DIR
SEEDS="0 1" exec bash "$(dirname "$0")/../alternate.sh" "${1:-.}" steps8kl02 "--num-envs 1024 --agent.algo.num-steps-per-env 8"
