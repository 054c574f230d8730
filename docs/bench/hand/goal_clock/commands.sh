# Usage, from the repository root with canter installed: bash docs/bench/hand/goal_clock/commands.sh DIR
H=${1:?usage: bash docs/bench/hand/goal_clock/commands.sh DIR}
mkdir -p $H
canter bench time-to-target hand-cube-axis --metric consecutive_successes_mean --target 10 --minutes 30 --eval-every 300 --out $H/ttt --save-dir $H/run > $H/ttt.log 2>&1
date
canter eval $H/run --episodes 256 --num-envs 256 --episode-length-s 20 --json > $H/eval20.json
canter eval $H/run --episodes 256 --num-envs 256 --json > $H/eval_default.json
date
