#!/bin/bash
# 2026-11-29, 2-core AMD EPYC (family 26, Zen 5; AVX-512, AVX512-BF16), torch 2.13.0+cpu, ale-py 0.12.1,
# code of 617c6fd, one run at a time. Throughput first (bench_train_4epochs.json is the first line's JSON):
canter bench train atari-pong --max-time 30 --num-envs 64 --json
canter bench train atari-pong --max-time 30 --num-envs 64 --json --agent.algo.num-learning-epochs 3
canter bench train atari-pong --max-time 30 --num-envs 64 --json --num-envs 128 --agent.algo.num-mini-batches 16
# then the run, stopped with SIGINT after the 60-minute mark (time_to_target.json: "stopped_by": "SIGINT"):
canter bench time-to-target atari-pong --metric mean_return --target 18 --minutes 90 --eval-every 900 \
    --episodes 16 --eval-envs 16 --out DIR/ttt --save-dir DIR/run --agent.algo.num-learning-epochs 3
