#!/bin/bash
# after run.sh: the cross evaluations. The non-DR 2-hour trajectory's checkpoints on randomized physics,
# the DR trajectory's source (30 min) on both physics, its 60-min-of-tilts checkpoint on plain physics.
# The figures came from the code of commit 4cef834 (BENCHMARKS §18); it ran once run.sh had finished.
# Usage, from the repository root with canter installed: bash docs/bench/hand/dr_2h/after.sh DIR DR HAND
# (DIR: the DIR given to run.sh, where this writes too; DR: the DIR given to ../dr_curriculum/dr.sh, which
# holds B/run; HAND: the DIR given to ../so3_2h/so3_2h.sh, which holds src30/run and tilt_ext of
# ../tilt_zen5/commands.sh and tilt_2h)
U="usage: bash docs/bench/hand/dr_2h/after.sh DIR DR HAND"
R=${1:?$U}
DR=$(cd "${2:?$U}" && pwd) || exit 1
HAND=$(cd "${3:?$U}" && pwd) || exit 1
cd "$R" || exit 1
E="canter eval --episodes 256 --num-envs 256 --json"
$E "$DR/B/run" --task hand-cube-dr > x_drsrc_on_dr.json 2> x_drsrc_on_dr.err
$E "$DR/B/run" --task hand-cube > x_drsrc_on_plain.json 2> x_drsrc_on_plain.err
$E "$HAND/src30/run" --task hand-cube-dr > x_plain30_on_dr.json 2> x_plain30_on_dr.err
$E "$HAND/tilt_ext" --task hand-cube-dr > x_plain59_on_dr.json 2> x_plain59_on_dr.err
for m in 45 60 75; do
  $E "$HAND/tilt_2h" --checkpoint "$HAND/tilt_2h/checkpoint_tilt${m}min.pt" --task hand-cube-dr > x_plaintilt${m}_on_dr.json 2> x_plaintilt${m}_on_dr.err
done
$E tiltdr --checkpoint tiltdr/checkpoint_tilt60min.pt --task hand-cube > x_drtilt60_on_plain.json 2> x_drtilt60_on_plain.err
date -u > after_done
