#!/bin/bash
# BENCHMARKS §15: dog-flat's defaults (1,024 envs x 12 steps, desired_kl 0.02) on a 2-core Zen 2 EPYC (family 23
# model 49: AVX2, no AVX-512, no bfloat16), four seeds, one run at a time (2026-12-06, code of 560442b), to set
# against the same defaults' four seeds on a Zen 4 in ../kl02. Usage: bash commands.sh DIR, then copy
# DIR/ttt_zen2_s{S}/time_to_target.{json,png} here as zen2_s{S}.{json,png} and run table.py.
exec bash "$(dirname "$0")/../alternate.sh" "${1:-.}" zen2 "--num-envs 1024"
# Three epochs instead of five, seeds 0 and 1, right after (copied here as epochs3_s{S}.{json,png}):
#   SEEDS="0 1" bash ../alternate.sh DIR epochs3 "--num-envs 1024 --agent.algo.num-learning-epochs 3"
