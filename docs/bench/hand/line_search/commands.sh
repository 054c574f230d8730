# 2026-11-28, AMD EPYC (2 cores, AVX2), one job at a time; code of 5ca339a + ls_iterations 10 -> 50 in
# src/canter/assets/hand_cube.xml (committed as 0076fe5).
# Usage, from the repository root with canter installed: bash docs/bench/hand/line_search/commands.sh DIR DROP
# (writes DIR/ls50s0, DIR/ls50s1 and DIR/so3; DROP: the DIR given to ../drop200/commands.sh)
HERE=$(dirname "$0")
R=${1:?usage: bash docs/bench/hand/line_search/commands.sh DIR DROP}
DROP=${2:?usage: bash docs/bench/hand/line_search/commands.sh DIR DROP (DROP: the DIR of ../drop200/commands.sh)}
# the family's defaults, the solver fixed, two seeds:
canter bench time-to-target hand-cube-axis --metric consecutive_successes_mean --target 10 --minutes 30 \
    --eval-every 300 --out "$R/ls50s0" --save-dir "$R/ls50s0/run"
canter bench time-to-target hand-cube-axis --metric consecutive_successes_mean --target 10 --minutes 30 \
    --eval-every 300 --out "$R/ls50s1" --save-dir "$R/ls50s1/run" --seed 1
# the drop -200 policies of ../drop200 (trained with 10 evaluations) scored under 10 and 50:
bash "$HERE/reeval.sh" "$DROP"
# random finger moves, cubes dropped with 10 and with 50 evaluations:
python "$HERE/random_walk_drops.py" 10
python "$HERE/random_walk_drops.py" 50
# the figure:
python "$HERE/compare.py"
# hand-cube (full SO(3)) with the solver fixed, 30 minutes (so3/):
canter bench time-to-target hand-cube --metric consecutive_successes_mean --target 5 --minutes 30 \
    --eval-every 900 --out "$R/so3" --save-dir "$R/so3/run"
