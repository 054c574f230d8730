#!/bin/bash
# BENCHMARKS §5: ant-classic (Gymnasium's ant.xml, 256 envs x 64 steps) with 3 learning epochs against the
# 5 of its defaults. 2026-12-07, a 2-core Intel Xeon of family 6 model 207 (AVX-512, no AVX512-BF16 or AMX),
# torch 2.13.0+cpu, MuJoCo 4.0.1, src/ as at b7bafd8, one command at a time.
# Usage, from the repository root with canter installed: bash docs/bench/ant_epochs/commands.sh DIR
# (JSON beside this script: DIR/<name>/sb3_15min.json copied as <name>.json, DIR/ab/* as ab/*; then
# python docs/bench/ant_epochs/table.py).
set -e
D=${1:?usage: bash docs/bench/ant_epochs/commands.sh DIR}
M=$(python -c "import gymnasium, pathlib; print(pathlib.Path(gymnasium.__file__).parent / 'envs/mujoco/assets/ant.xml')")
# 15 minutes each, seed 0 (defaults first); seed 1 (3 epochs first) comes last
canter bench sb3 --minutes 15 --no-sb3 --out "$D/e5"
canter bench sb3 --minutes 15 --no-sb3 --out "$D/e3" --agent.algo.num-learning-epochs 3
# side by side from one 4-minute policy: 45-s training benches, alternated three times
mkdir -p "$D/ab"
canter train ant-classic --model "$M" --num-envs 256 --max-time 240 --run-dir "$D/ab/base" --quiet
for r in 1 2 3; do
  canter bench train ant-classic --model "$M" --num-envs 256 --max-time 45 --init-from "$D/ab/base" --json > "$D/ab/e5_$r.json"
  canter bench train ant-classic --model "$M" --num-envs 256 --max-time 45 --init-from "$D/ab/base" --json \
    --agent.algo.num-learning-epochs 3 > "$D/ab/e3_$r.json"
done
canter bench sb3 --minutes 15 --no-sb3 --seed 1 --out "$D/e3_s1" --agent.algo.num-learning-epochs 3
canter bench sb3 --minutes 15 --no-sb3 --seed 1 --out "$D/e5_s1"
