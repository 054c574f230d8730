#!/bin/bash
# alternate three Pong rollout sizes, 30 s each, twice; same gradient steps per frame (minibatch 256)
. /work/main/.venv/bin/activate
cd /work/runs-pong
for rep in 1 2; do
  for n in 64 128 256; do
    mb=$((n / 8))
    echo "== n=$n mb=$mb rep=$rep $(date)"
    canter bench train atari-pong --max-time 30 --num-envs $n --json --agent.algo.num-mini-batches $mb > tp_n${n}_r${rep}.json
    python -c "import json;d=json.load(open('tp_n${n}_r${rep}.json'));print({k:v for k,v in d.items() if not isinstance(v,(dict,list))})"
  done
done
echo "== done $(date)"
