#!/usr/bin/env bash
# Every figure in BENCHMARKS.md, in one run on one machine. Writes JSON/PNG/logs into $OUT.
# Needs the bench extra for the Gymnasium / Stable-Baselines3 rows: pip install -e ".[bench]"
# Usage: bash scripts/run_benchmarks.sh [OUT] [SB3_MINUTES...]   (default: bench_out, 3 15)
set -euo pipefail
OUT=${1:-bench_out}
shift || true
SB3_MINUTES=${*:-3 15}
mkdir -p "$OUT"
GYM_ANT=$(python -c "import gymnasium, os; print(os.path.join(os.path.dirname(gymnasium.__file__), 'envs/mujoco/assets/ant.xml'))")
log() { echo "[$(date +%H:%M:%S)] $*"; }

for n in 256 1024 4096; do
  log "bench env ant N=$n"
  canter bench env ant --num-envs "$n" --json > "$OUT/env_ant_$n.json"
done
log "bench env ant on Gymnasium's ant.xml N=1024"
canter bench env ant --model "$GYM_ANT" --num-envs 1024 --json > "$OUT/env_gymant_1024.json"
log "bench env cartpole N=1024"
canter bench env cartpole --num-envs 1024 --json > "$OUT/env_cartpole_1024.json"
log "bench env ant warp (Warp CPU device) N=256"
canter bench env ant --num-envs 256 --backend warp --repeats 3 --seconds 2 --json > "$OUT/env_ant_warp_256.json"
log "bench env dog-flat N=1024 (the quadruped)"
canter bench env dog-flat --num-envs 1024 --json > "$OUT/env_dog_1024.json"
log "bench memory"
canter bench memory ant --json > "$OUT/memory_ant.json"

log "cartpole: time to 95% of the best return"
rm -rf "$OUT/cartpole_run"
canter train cartpole --run-dir "$OUT/cartpole_run" --quiet > "$OUT/cartpole_train.log" 2>&1
canter eval "$OUT/cartpole_run" --episodes 256 --num-envs 256 --json > "$OUT/cartpole_eval.json"

log "bench train ant-classic on Gymnasium's ant.xml (60 s)"
canter bench train ant-classic --model "$GYM_ANT" --max-time 60 --json > "$OUT/train_gymant.json"
log "bench train ant (60 s), eager vs torch.compile"
canter bench train ant --max-time 60 --json > "$OUT/train_ant_eager.json"
canter bench train ant --max-time 60 --agent.algo.compile --json > "$OUT/train_ant_compile.json"

log "bench train dog-flat (60 s)"
canter bench train dog-flat --max-time 60 --json > "$OUT/train_dog.json"

for m in $SB3_MINUTES; do
  log "bench sb3 $m min"
  canter bench sb3 --minutes "$m" --out "$OUT" > "$OUT/sb3_${m}min.txt"
done
log "done"
