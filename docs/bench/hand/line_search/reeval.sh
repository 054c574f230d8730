#!/bin/bash
# The two drop -200 policies of ../drop200 (trained with 10 line-search evaluations), scored under
# 10 and under 50: the same checkpoint, the same 256 episodes (seeded), only the solver option differs.
# Usage: bash reeval.sh RUNS_DIR   (RUNS_DIR holds drop200/run and drop200s1/run)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ASSET=$(python -c "from canter.sim.model import asset_path; print(asset_path('hand_cube.xml'))")
TMP=$(mktemp -d)
for ls in 10 50; do
    sed -E "s/ls_iterations=\"[0-9]+\"/ls_iterations=\"$ls\"/" "$ASSET" > "$TMP/hand_ls$ls.xml"
done
for run in drop200 drop200s1; do
    for ls in 10 50; do
        dir="$TMP/$run-ls$ls"
        mkdir -p "$dir"
        cp "$1/$run/run/checkpoint.pt" "$1/$run/run/config.yaml" "$dir/"
        python - "$1/$run/run/command.json" "$dir/command.json" "$TMP/hand_ls$ls.xml" <<'PY'
import json, sys
command = json.load(open(sys.argv[1]))
command["flags"]["model"] = sys.argv[3]
json.dump(command, open(sys.argv[2], "w"), indent=2)
PY
        canter eval "$dir" --episodes 256 --num-envs 256 --json > "$HERE/eval_${run}_ls$ls.json"
    done
done
rm -rf "$TMP"
