#!/bin/bash
# BENCHMARKS §15: dog-flat's defaults (1,024 envs x 12 steps, desired_kl 0.02) on a 2-core Intel Xeon of family 6
# model 207 whose VM shows AVX-512 but neither AVX512-BF16 nor AMX (torch's capability: AVX512), four seeds, one run
# at a time (2026-12-06, code of 8224518), to set against the Zen 2 (../zen2) and Zen 4 (../kl02) runs of the same
# defaults. Usage: bash commands.sh DIR, then copy DIR/ttt_xeon_s{S}/time_to_target.{json,png} here as
# xeon_s{S}.{json,png} and run table.py.
# Before it, throughput/ (env.json, train.json) came from, one after the other:
#   canter bench env dog-flat --num-envs 1024 --seconds 5 --repeats 3 --json
#   canter bench train dog-flat --max-time 60 --json
exec bash "$(dirname "$0")/../alternate.sh" "${1:-.}" xeon "--num-envs 1024"
