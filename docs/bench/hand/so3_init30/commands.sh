# 2026-11-28, AMD EPYC (2 cores, AVX2), code of 1fffe70, nothing else running; the source policy is the
# 30-minute hand-cube-axis run of docs/bench/hand/relative30 (relative targets, same observations)
canter bench time-to-target hand-cube --metric consecutive_successes_mean --target 5 --minutes 30 --eval-every 300 \
    --init-from /work/runs-hand-rel/rel01/run --out /work/runs-hand-init/init30 --save-dir /work/runs-hand-init/init30/run
