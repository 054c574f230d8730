#!/usr/bin/env bash
# PPO (canter's defaults) against the FastTD3-style learner on dog-flat, one after the other, the
# same evaluation (time_to_target's seed, 256 episodes every 2 minutes of training wall time).
# usage: bash docs/bench/offpolicy/compare.sh DIR MINUTES
set -euo pipefail
out=$1; minutes=${2:-14}
mkdir -p "$out"
canter bench time-to-target dog-flat --metric lin_vel_x_abs_error,lin_vel_y_abs_error --target 0.15 \
  --minutes "$minutes" --eval-every 120 --episodes 256 --eval-envs 256 --out "$out/ppo" > "$out/ppo.log" 2>&1
python docs/bench/offpolicy/fasttd3.py --task dog-flat --minutes "$minutes" --eval-every 120 --episodes 256 \
  --eval-envs 256 --num-envs 512 --batch 2048 --updates-per-step 2 --out "$out/td3_512" > "$out/td3_512.log" 2>&1
python docs/bench/offpolicy/fasttd3.py --task dog-flat --minutes "$minutes" --eval-every 120 --episodes 256 \
  --eval-envs 256 --num-envs 1024 --batch 2048 --updates-per-step 2 --out "$out/td3_1024" > "$out/td3_1024.log" 2>&1
