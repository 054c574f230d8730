#!/bin/bash
# Usage, from the repository root with canter installed: bash docs/bench/dog_rough_entry/commands.sh DIR
# (writes DIR/flat5 and DIR/rough55)
set -x
R=${1:?usage: bash docs/bench/dog_rough_entry/commands.sh DIR}
date
canter train dog-flat --max-time 300 --max-iterations 100000 --run-dir $R/flat5 --agent.learn-threads 1
date
canter train dog-rough --init-from $R/flat5 --max-time 3300 --max-iterations 100000 --run-dir $R/rough55 --agent.learn-threads 1
date
