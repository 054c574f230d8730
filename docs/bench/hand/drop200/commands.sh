# 2026-11-28, AMD EPYC (2 cores, AVX2), one run at a time.
# hand-cube-axis with the drop penalty at -200 (weight -200 x 0.01 / dt = -66.67) instead of -50,
# before it became the hand family's default; both seeds on the code of 9c95713 (seed 0 started on its working tree).
# Usage, from the repository root with canter installed: bash docs/bench/hand/drop200/commands.sh DIR
# (writes DIR/drop200 and DIR/drop200s1; ../line_search/reeval.sh re-scores them from DIR).
HERE=$(dirname "$0")
R=${1:?usage: bash docs/bench/hand/drop200/commands.sh DIR}
canter bench time-to-target hand-cube-axis --metric consecutive_successes_mean --target 10 --minutes 30 \
    --eval-every 300 --out "$R/drop200" --save-dir "$R/drop200/run" \
    --env.rewards.drop.weight -66.66666666666667
canter bench time-to-target hand-cube-axis --metric consecutive_successes_mean --target 10 --minutes 30 \
    --eval-every 300 --out "$R/drop200s1" --save-dir "$R/drop200s1/run" \
    --seed 1 --env.rewards.drop.weight -66.66666666666667
# the comparison figure with the -50 run of docs/bench/hand/relative30/:
python "$HERE/compare.py"
