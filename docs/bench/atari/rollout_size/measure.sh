#!/bin/bash
# alternate three Pong rollout sizes, 30 s each, twice; same gradient steps per frame (minibatch 256)
# Usage, from the repository root with canter installed: bash docs/bench/atari/rollout_size/measure.sh DIR
# (it writes the tp_n*_r*.json files in DIR; the ones beside this script are copies)
R=${1:?usage: bash docs/bench/atari/rollout_size/measure.sh DIR}
mkdir -p "$R" && cd "$R" || exit 1
for rep in 1 2; do
  for n in 64 128 256; do
    mb=$((n / 8))
    echo "== n=$n mb=$mb rep=$rep $(date)"
    canter bench train atari-pong --max-time 30 --num-envs $n --json --agent.algo.num-mini-batches $mb > tp_n${n}_r${rep}.json
    python -c "import json;d=json.load(open('tp_n${n}_r${rep}.json'));print({k:v for k,v in d.items() if not isinstance(v,(dict,list))})"
  done
done
echo "== done $(date)"
