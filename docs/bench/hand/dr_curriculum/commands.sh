# 2026-11-29, 2-core AMD EPYC family 26 (Zen 5), code of cc5e02c; one training at a time (dr.sh ran them).
# B: the randomization curriculum (the default since cc5e02c)
canter bench time-to-target hand-cube-axis-dr --metric consecutive_successes_mean --target 10 --minutes 30 --eval-every 900 --seed 1 --out B --save-dir B/run
# A: the full ranges throughout
canter bench time-to-target hand-cube-axis-dr --metric consecutive_successes_mean --target 10 --minutes 30 --eval-every 900 --seed 1 --out A --save-dir A/run --env.curriculum.randomization.params.start 1 --env.curriculum.randomization.params.step 0
# every policy on both physics (plain = the 30-minute hand-cube-axis seed-1 run of docs/bench/hand/tilt_zen5, src30/run)
for r in A/run B/run src30/run; do for t in hand-cube-axis hand-cube-axis-dr; do
  canter eval $r --task $t --episodes 256 --num-envs 256 --json
done; done
python docs/bench/hand/axis_dr/compare.py docs/bench/hand/dr_curriculum
