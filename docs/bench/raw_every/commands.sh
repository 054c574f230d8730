#!/bin/bash
# BENCHMARKS §3 ("Training against raw Batch measured beside it"): `canter bench train --raw-every K` on dog-flat
# (1,024 envs, 2 minutes) and on ant-classic (Gymnasium's ant.xml, 256 envs, 15 minutes) with its 3 learning epochs
# and with the 5 it had before, two seeds each. 2026-12-07, a 2-core Intel Xeon of family 6 model 207 (AVX-512, no AVX512-BF16 or
# AMX), torch 2.13.0+cpu, MuJoCo 4.0.1, code of c085232, one command at a time, nothing else running.
# Usage, from the repository root with canter installed: bash docs/bench/raw_every/commands.sh DIR
# (JSON and PNG beside this script: DIR/*.json and *.png copied into xeon/).
set -e
D=${1:?usage: bash docs/bench/raw_every/commands.sh DIR}
M=$(python -c "import gymnasium, pathlib; print(pathlib.Path(gymnasium.__file__).parent / 'envs/mujoco/assets/ant.xml')")
mkdir -p "$D"
canter bench train dog-flat --max-time 120 --raw-every 3 --json > "$D/dog_flat_120.json"
canter bench train ant-classic --model "$M" --num-envs 256 --max-time 900 --raw-every 4 --json > "$D/ant_900.json"
canter bench train ant-classic --model "$M" --num-envs 256 --max-time 900 --raw-every 4 --json \
  --agent.algo.num-learning-epochs 5 > "$D/ant_900_e5.json"
# a second seed of each, 3 epochs first
canter bench train ant-classic --model "$M" --num-envs 256 --max-time 900 --raw-every 4 --json --seed 1 > "$D/ant_900_s1.json"
canter bench train ant-classic --model "$M" --num-envs 256 --max-time 900 --raw-every 4 --json --seed 1 \
  --agent.algo.num-learning-epochs 5 > "$D/ant_900_e5_s1.json"
# the dog for 6 minutes (code of f2cf891: the same measurement)
canter bench train dog-flat --max-time 360 --raw-every 5 --json > "$D/dog_flat_360.json"
python docs/bench/raw_every/plot.py "$D"/*.json
