#!/usr/bin/env bash
# The Pong policy exported and deployed (BENCHMARKS.md §9, "The Pong policy, exported and played").
# Trained with commit 5e4baca's learner (unchanged since), exported and deployed at commit 2fda23b, on the
# 2-core Intel Xeon (family 6 model 207, no AVX512-BF16: the update in float32), one command at a time.
# Usage, from the repository root with canter installed: bash docs/bench/deploy_atari_pong/run.sh OUT_DIR
set -euo pipefail
OUT=${1:?usage: run.sh OUT_DIR}
R="$OUT/pong45"
mkdir -p "$OUT"
canter train atari-pong --max-time 2700 --run-dir "$R" --quiet            # 45 minutes, the rate annealed to 0
canter export "$R"                                                          # fp32 ONNX + report
canter export "$R" --quantize int8                                          # dynamic int8 MatMuls
canter eval "$R" --episodes 16 --num-envs 16 --json > "$OUT/eval.json"      # the torch policy, 16 games
canter deploy run "$R/exported/policy.onnx" --episodes 16 --unpaced --out "$OUT/fp32_unpaced"
canter deploy run "$R/exported/policy.int8.onnx" --episodes 16 --unpaced --out "$OUT/int8_unpaced"
canter deploy run "$R/exported/policy.onnx" --duration 300 --out "$OUT/fp32_15hz" --video "$OUT/pong_15hz.mp4"
python docs/bench/deploy_atari_pong/int8_modes.py "$R" > "$OUT/int8_modes.txt"  # dynamic vs static int8 (not a Canter mode)
python scripts/play_atari_onnx.py "$R/exported/policy.onnx" --games 16 > "$OUT/gymnasium_16_games.txt"   # Gymnasium's ALE
python scripts/play_atari_onnx.py "$R/exported/policy.onnx" --games 48 --seed 100 > "$OUT/gymnasium_48_games.txt"
