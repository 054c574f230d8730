"""The source policy (the 30-minute hand-cube-axis run of ../line_search, seed 1) in TASK for 600 steps
of 64 envs before any training: goals reached per env and minute. hand-cube-axis is set to the goal
range its curriculum had reached at 30 minutes (1.7 rad). Usage: python probe.py RUN TASK [s]  (RUN: that
source run, ls50s1/run in the DIR given to ../line_search/commands.sh; s: sampled actions, as training
acts; else the deterministic policy)."""

from __future__ import annotations

import sys

import torch

from canter.runs.load import load_run

if len(sys.argv) < 3:
    sys.exit("usage: python probe.py RUN TASK [s]")
task = sys.argv[2]
_, args, runner = load_run(sys.argv[1], num_envs=64, task=task)
env = runner.env
obs = env.reset()[0]
goal = env.command_manager.term("goal")
if task == "hand-cube-axis":
    goal.goal_range.fill_(1.7)
generator = torch.Generator().manual_seed(0)
reached = 0
with torch.no_grad():
    for _ in range(600):
        if len(sys.argv) > 3:
            actions = runner.algorithm.policy.act(obs, generator).actions
        else:
            actions = runner.algorithm.policy.act_inference(obs)
        obs = env.step(actions)[0]
        reached += int(goal.reached.sum())
print(task, "goal range", float(goal.goal_range), "goals reached", reached,
      "goals per env and minute", reached / 64 / (600 * env.step_dt / 60))
