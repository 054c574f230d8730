#!/bin/bash
# 2026-11-29, a 2-core AMD EPYC of family 26 (Zen 5, AVX-512 with AVX512-BF16), 24 GB, Python 3.11.7,
# torch 2.13.0+cpu, MuJoCo 4.0.0; code of a09aab8 (no change to the task or learner since d8983cb but
# the logger's recent means); nothing else ran but one niced test file (107 s) in the first 10 minutes.
# Usage, from the repository root with canter installed: bash docs/bench/arm_grasp_zen5/commands.sh RUN
# (the run goes in RUN; the evaluations' JSON into this folder)
HERE=$(dirname "$0")
D=${1:?usage: bash docs/bench/arm_grasp_zen5/commands.sh RUN}
canter train arm-grasp-rgbd --max-time 3600 --agent.algo.schedule linear --agent.algo.min-learning-rate 0 --run-dir $D
canter eval $D --episodes 1024 --num-envs 128 --photos unseen --json > "$HERE/eval_unseen_1024.json"
canter eval $D --episodes 256 --num-envs 128 --photos unseen --json > "$HERE/eval_unseen_256.json"
canter eval $D --episodes 256 --num-envs 128 --photos train --json > "$HERE/eval_train_256.json"
