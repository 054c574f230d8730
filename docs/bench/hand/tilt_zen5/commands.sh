#!/bin/bash
# 2026-11-29, a 2-core AMD EPYC of family 26 (Zen 5, AVX-512), torch 2.13.0+cpu, MuJoCo 4.0.0, code of
# c244c84, one job at a time (nothing else ran). The source, then the two fine-tunes one after the other:
canter bench time-to-target hand-cube-axis --metric consecutive_successes_mean --target 10 --minutes 30 \
    --eval-every 900 --seed 1 --out src30 --save-dir src30/run
canter train hand-cube-tilt --init-from src30/run --max-time 720 --run-dir tilt_fresh --init-fresh-optimizer
canter train hand-cube-tilt --init-from src30/run --max-time 720 --run-dir tilt_copy
# each final policy on the full goal set (canter eval always scores the full set):
canter eval tilt_fresh --episodes 256 --num-envs 256 --json > eval_full_set_fresh.json
canter eval tilt_copy --episodes 256 --num-envs 256 --json > eval_full_set_copy.json
python plot.py tilt_fresh tilt_copy tilt_fresh_vs_copy.png
# then the default fine-tune continued (a copy of tilt_copy; resume's --max-time counts this call's seconds),
# stopped by SIGINT at 1,756 s of tilts in all (iteration 850, 13.9 M steps), and scored on the full set:
canter train --resume tilt_ext --max-time 1620
canter eval tilt_ext --episodes 256 --num-envs 256 --json > eval_full_set_copy_29min.json
