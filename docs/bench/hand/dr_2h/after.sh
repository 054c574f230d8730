#!/bin/bash
# after run.sh: the cross evaluations. The non-DR 2-hour trajectory's checkpoints on randomized physics,
# the DR trajectory's source (30 min) on both physics, its 60-min-of-tilts checkpoint on plain physics.
. /work/main/.venv/bin/activate
export PYTHONPATH=/work/wt-dr2/src
cd /work/runs-dr2
while [ ! -e done ]; do sleep 10; done
E="canter eval --episodes 256 --num-envs 256 --json"
$E /work/runs-dr/B/run --task hand-cube-dr > x_drsrc_on_dr.json 2> x_drsrc_on_dr.err
$E /work/runs-dr/B/run --task hand-cube > x_drsrc_on_plain.json 2> x_drsrc_on_plain.err
$E /work/runs-hand/src30/run --task hand-cube-dr > x_plain30_on_dr.json 2> x_plain30_on_dr.err
$E /work/runs-hand/tilt_ext --task hand-cube-dr > x_plain59_on_dr.json 2> x_plain59_on_dr.err
for m in 45 60 75; do
  $E /work/runs-hand/tilt_2h --checkpoint /work/runs-hand/tilt_2h/checkpoint_tilt${m}min.pt --task hand-cube-dr > x_plaintilt${m}_on_dr.json 2> x_plaintilt${m}_on_dr.err
done
$E tiltdr --checkpoint tiltdr/checkpoint_tilt60min.pt --task hand-cube > x_drtilt60_on_plain.json 2> x_drtilt60_on_plain.err
date -u > after_done
