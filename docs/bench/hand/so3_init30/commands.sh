# 2026-11-28, AMD EPYC (2 cores, AVX2), code of 1fffe70, nothing else running; the source policy is the
# 30-minute hand-cube-axis run of docs/bench/hand/relative30 (relative targets, same observations)
# Usage, from the repository root with canter installed: bash docs/bench/hand/so3_init30/commands.sh DIR REL
# (REL: the DIR given to ../relative30/commands.sh, which holds rel01/run; this writes DIR/init30)
R=${1:?usage: bash docs/bench/hand/so3_init30/commands.sh DIR REL}
REL=${2:?usage: bash docs/bench/hand/so3_init30/commands.sh DIR REL (REL: the DIR of ../relative30/commands.sh)}
canter bench time-to-target hand-cube --metric consecutive_successes_mean --target 5 --minutes 30 --eval-every 300 \
    --init-from "$REL/rel01/run" --out "$R/init30" --save-dir "$R/init30/run"
