#!/bin/bash
# BENCHMARKS §21: issue 14/17 throughput on a 2-core Zen 5 EPYC (AVX512-BF16), one after the other.
# Usage: bash docs/bench/zen5/measure.sh OUT_DIR   (set1/ and set2/ are two passes, 2026-11-29, code of 617c6fd)
set -u
out=$1; mkdir -p "$out"; cd "$out"
canter bench atari --game pong --num-envs 64 --json > atari.json
canter bench env dog-flat --num-envs 1024 --seconds 5 --repeats 3 --json > env.json
canter bench train dog-flat --max-time 60 --json > train_fp32_a.json
canter bench train dog-flat --max-time 60 --json --agent.algo.autocast bf16 > train_bf16.json
canter bench train dog-flat --max-time 60 --json > train_fp32_b.json
canter bench train atari-pong --max-time 30 --num-envs 64 --json --agent.algo.autocast off > pong_fp32.json
canter bench train atari-pong --max-time 30 --num-envs 64 --json > pong_bf16.json
