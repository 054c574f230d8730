#!/bin/bash
# BENCHMARKS §6: dog-rough's training throughput with the learner on one core or two, in float32 or bf16, 60 s
# each, one after the other (JSON as lt{1,2}_{fp32,bf16}.json). Usage: bash run.sh OUT_DIR
set -e
OUT=${1:-.}
run() { canter bench train dog-rough --max-time 60 --json "${@:2}" > "$OUT/$1.json"; }
run lt1_fp32 --agent.learn-threads 1
run lt2_fp32 --agent.learn-threads 2
run lt1_bf16 --agent.learn-threads 1 --agent.algo.autocast bf16
run lt2_bf16 --agent.learn-threads 2 --agent.algo.autocast bf16
