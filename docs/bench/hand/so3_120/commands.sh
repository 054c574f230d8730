# hand-cube (full SO(3)), 2 hours, code of 42823eb (training; the bench's JSON names 8eff86e, the commit
# checked out when it finished: it added `canter eval --task` and changed nothing in training)
# Usage, from the repository root with canter installed: bash docs/bench/hand/so3_120/commands.sh DIR
# (the run goes in DIR; eval_on_dr_physics.json and replay_goal_sets.json into this folder)
HERE=$(dirname "$0")
H=${1:?usage: bash docs/bench/hand/so3_120/commands.sh DIR}
canter bench time-to-target hand-cube --metric consecutive_successes_mean --target 5 --minutes 120 --eval-every 900 --out $H/ttt --save-dir $H/run
# the non-randomized policy on hand-cube-dr's randomized physics
canter eval $H/run --task hand-cube-dr --episodes 256 --num-envs 256 --json > "$HERE/eval_on_dr_physics.json"
# the final policy on three goal sets (training curriculum's near goals, the same about z only, the full set)
python "$HERE/replay_goal_sets.py" $H/run "$HERE/replay_goal_sets.json"
