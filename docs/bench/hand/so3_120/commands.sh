# hand-cube (full SO(3)), 2 hours, code of 42823eb (training; the bench's JSON names 8eff86e, the commit
# checked out when it finished: it added `canter eval --task` and changed nothing in training)
H=/work/runs-hand-so3
canter bench time-to-target hand-cube --metric consecutive_successes_mean --target 5 --minutes 120 --eval-every 900 --out $H/ttt --save-dir $H/run
# the non-randomized policy on hand-cube-dr's randomized physics
canter eval $H/run --task hand-cube-dr --episodes 256 --num-envs 256 --json > eval_on_dr_physics.json
# the final policy on three goal sets (training curriculum's near goals, the same about z only, the full set)
python replay_goal_sets.py $H/run replay_goal_sets.json
