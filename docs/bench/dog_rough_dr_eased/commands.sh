#!/bin/bash
# BENCHMARKS §6: the terrain hour of ../dog_rough_open (seed 0) with legged_gym's rough-terrain randomization, foot
# friction and pushes only, from a 280-iteration dog-flat run (../dog_rough_bf16's flat5, Adam state carried).
# Measured at code a8d79e8, where dog-rough had seed 004's full list (now dog-rough-dr), with the other six ranges set
# to neutral by these flags:
#   --env.actions.joint-pos.max-delay-steps 0 --env.events.action-delay.params.delay-range 0 0
#   --env.events.trunk-mass.params.mass-range 0 0 --env.events.trunk-com.params.offset-range 0 0
#   --env.events.inertia.params.scale-range 1 1
#   --env.events.pd-gains.params.kp-scale-range 1 1 --env.events.pd-gains.params.kd-scale-range 1 1
#   --env.events.motor-strength.params.scale-range 1 1
# Since then it is dog-rough's default (those events are gone from it), so this runs the task as registered.
# Usage: bash commands.sh DIR FLAT5
# (then the levels and the grid evaluation: ../dog_rough_seed1/one_lever.sh; the 28.1 M-step figure: copy DIR/rough55
# and `canter train --resume COPY --max-iterations 1144`; the grids under the full list: canter eval RUN --task
# dog-rough-dr --terrain-grid --num-envs 400 --episodes 400 --json; the 120-minute figure in min120/: copy DIR/rough55
# and `canter train --resume COPY --max-time 3600`, then `python scripts/terrain_levels.py COPY --out LEVELS` and
# `canter eval COPY --task dog-rough --terrain-grid --num-envs 400 --episodes 400 --plot GRID.png --json`. The seed-0 run
# of 2026-12-06 was made at a8d79e8 with the flags above, which name events dog-rough has since lost, so it was resumed
# under that commit's code: a run made by this script now has no such flags and resumes under any later code)
exec bash "$(dirname "$0")/../dog_rough_seed1/one_lever.sh" "${1:-runs-rough-dr-eased}" "$2"
