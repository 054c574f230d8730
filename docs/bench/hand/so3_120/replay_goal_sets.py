"""What limits hand-cube: the final policy under its training curriculum's near goals (a turn of
0.4-0.6 rad about a random axis) against near goals about the vertical axis only (hand-cube-axis's
env, same curriculum range), and the full goal set (canter eval's). 256 episodes each, 256 envs,
deterministic policy, per-goal clock."""
import json
import sys

from canter.cli.play_eval import evaluate
from canter.runs.load import load_run
from canter.tasks import REGISTRY

run = sys.argv[1]
out = {}
for task, scoring in (("hand-cube", False), ("hand-cube-axis", False), ("hand-cube", True)):
    _, args, runner = load_run(run, num_envs=256, task=task)
    if scoring:
        runner.env.evaluation()
    spec = REGISTRY.get(task)
    r = evaluate(runner, 256, spec.metrics, spec.episode_metrics)
    key = f"{task}:{'full goal set' if scoring else 'training goals (range %.2f rad)' % float(runner.env.command_manager.terms['goal'].goal_range)}"
    out[key] = r
    print(key, json.dumps({k: round(v, 4) for k, v in r.items()}), flush=True)
json.dump(out, open(sys.argv[2], "w"), indent=2)
