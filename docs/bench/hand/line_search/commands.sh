# 2026-11-28, AMD EPYC (2 cores, AVX2), one job at a time; code of 5ca339a + ls_iterations 10 -> 50 in
# src/canter/assets/hand_cube.xml (committed as 0076fe5).
# the family's defaults, the solver fixed, two seeds:
canter bench time-to-target hand-cube-axis --metric consecutive_successes_mean --target 10 --minutes 30 \
    --eval-every 300 --out /work/runs-hand-ls/ls50s0 --save-dir /work/runs-hand-ls/ls50s0/run
canter bench time-to-target hand-cube-axis --metric consecutive_successes_mean --target 10 --minutes 30 \
    --eval-every 300 --out /work/runs-hand-ls/ls50s1 --save-dir /work/runs-hand-ls/ls50s1/run --seed 1
# the drop -200 policies of ../drop200 (trained with 10 evaluations) scored under 10 and 50:
bash reeval.sh /work/runs-hand-drop
# random finger moves, cubes dropped with 10 and with 50 evaluations:
python random_walk_drops.py 10
python random_walk_drops.py 50
# the figure:
python compare.py
# hand-cube (full SO(3)) with the solver fixed, 30 minutes (so3/):
canter bench time-to-target hand-cube --metric consecutive_successes_mean --target 5 --minutes 30 \
    --eval-every 900 --out /work/runs-hand-ls/so3 --save-dir /work/runs-hand-ls/so3/run
