#!/bin/bash
# BENCHMARKS §20, "AVX-512 is not bfloat16": Pong's training speed on a 2-core Intel Xeon with AVX-512 but no
# AVX512-BF16 or AMX (2026-12-06), one command after the other, nothing else running. auto_before.json is the first
# command on the code of fb5e433 (auto chose bf16 there); the three after it on the fix's code.
set -e
cd "${1:-.}"
canter bench train atari-pong --max-time 30 --num-envs 64 --json > auto_before.json  # run on fb5e433
canter bench train atari-pong --max-time 30 --num-envs 64 --json > auto_after_1.json
canter bench train atari-pong --max-time 30 --num-envs 64 --json --agent.algo.autocast bf16 > bf16_forced.json
canter bench train atari-pong --max-time 30 --num-envs 64 --json > auto_after_2.json
# and the emulator side on the same CPU: canter bench atari --game pong --num-envs 64 --json > bench_atari_64.json
python ../../time_to_target/zen2/compute_floor.py --bf16
