#!/bin/bash
# BENCHMARKS §6: dog-rough's terrain hour (friction and pushes, the defaults since 30049fd) with left-right symmetry
# augmentation (every minibatch gets its mirror image, §19's declared mirror of the dog with the height scan reflected),
# from ../dog_rough_bf16's flat5 (Adam state carried), seed 0; then the levels and the grid evaluation, and
# `python docs/bench/dog_rough_seed1/against_seeds.py DIR/levels "symmetry augment" eased`.
# Usage: bash commands.sh DIR FLAT5
exec bash "$(dirname "$0")/../dog_rough_seed1/one_lever.sh" "${1:-runs-rough-symmetry}" "$2" --agent.algo.symmetry augment
