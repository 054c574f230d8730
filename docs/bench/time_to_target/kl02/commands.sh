#!/bin/bash
# BENCHMARKS §15: dog-flat's default (1,024 envs x 12 steps) with the adaptive schedule's desired_kl at 0.02
# instead of 0.01 (a learning rate held about twice as high), four seeds, one run at a time (2026-12-04, a 2-core
# Zen 4 EPYC, code of 28153a3). The default's eight runs to set it against are in ../steps12 and ../steps8
# (the same machine type, the same evaluation; compared at equal env steps). Usage: bash commands.sh DIR
exec bash "$(dirname "$0")/../alternate.sh" "${1:-.}" kl02 "--num-envs 1024 --agent.algo.desired-kl 0.02"
