#!/bin/bash
# BENCHMARKS §6: dog-rough's terrain hour (friction and pushes, the defaults since 30049fd) with 3 PPO epochs instead of 5,
# from ../dog_rough_bf16's flat5 (Adam state carried), seed 0. Stopped by Ctrl-C at 32 terrain minutes (505 iterations)
# once it trailed both default seeds by steps and by time, so no grid evaluation; the levels then came from
# `python scripts/terrain_levels.py DIR/rough55 --out LEVELS` and
# `python docs/bench/dog_rough_seed1/against_seeds.py LEVELS "3 epochs" eased`.
# Usage: bash commands.sh DIR FLAT5
exec bash "$(dirname "$0")/../dog_rough_seed1/one_lever.sh" "${1:-runs-rough-epochs3}" "$2" --agent.algo.num-learning-epochs 3
