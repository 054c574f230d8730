# 2026-11-28, AMD EPYC (2 cores, AVX2), nothing else running.
# Run on the working tree that became commit 5ac9512, before relative targets were the hand family's
# default: driver.py registers hand-cube-axis-rel = hand-cube-axis with relative targets (0.1 rad per
# step) and the joint_target observation, exactly what hand-cube-axis is from 5ac9512 on. There the
# same run is:
#   canter bench time-to-target hand-cube-axis --metric consecutive_successes_mean --target 10 \
#       --minutes 30 --eval-every 300 --out DIR --save-dir DIR/run
# Usage, from the repository root with canter installed: bash docs/bench/hand/relative30/commands.sh DIR
# (writes DIR/rel01; ../so3_init30 starts from DIR/rel01/run).
HERE=$(dirname "$0")
R=${1:?usage: bash docs/bench/hand/relative30/commands.sh DIR}
REL_SCALE=0.1 python "$HERE/driver.py" bench time-to-target hand-cube-axis-rel --metric consecutive_successes_mean \
    --target 10 --minutes 30 --eval-every 300 --out $R/rel01 --save-dir $R/rel01/run
# the comparison figure with the absolute-target run of docs/bench/hand/goal_clock/ (same machine, code 324643e):
python "$HERE/compare.py"
