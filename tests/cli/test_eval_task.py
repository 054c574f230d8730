"""`canter eval RUN --task T` (and `canter play --task T`): the run's policy acting in another
registered task's env, e.g. a hand-cube policy on hand-cube-dr's randomized physics (issue 15's
"non-randomized policy evaluated on randomized physics"); a task whose observations or actions do
not fit the policy, or no task at all, is one line and exit 2."""

from __future__ import annotations

import json

import torch

from canter.cli.main import main
from canter.runs.load import load_run

from .test_train import SMALL, _in_process, _one_error_line


def _reset_terms(runner) -> set[str]:
    return {name for name, *_ in runner.env.event_manager.terms["reset"]}


def test_a_hand_cube_policy_is_evaluated_on_the_randomized_physics(tmp_path, capfd):
    run = tmp_path / "hand"
    assert main(["train", "hand-cube", "--run-dir", str(run), *SMALL, "--max-iterations", "1"]) == 0
    capfd.readouterr()

    _, own_args, own = load_run(run, num_envs=4)
    _, dr_args, dr = load_run(run, num_envs=4, task="hand-cube-dr")
    assert (own_args.task, dr_args.task) == ("hand-cube", "hand-cube-dr")
    # the same policy, weight for weight; the env is hand-cube-dr's, randomization and latency included
    mine, theirs = own.algorithm.policy.state_dict(), dr.algorithm.policy.state_dict()
    assert mine.keys() == theirs.keys() and all(torch.equal(mine[k], theirs[k]) for k in mine)
    assert {"cube_mass", "cube_friction", "pd_gains", "action_delay"} <= _reset_terms(dr)
    assert not {"cube_mass", "cube_friction", "pd_gains", "action_delay"} & _reset_terms(own)
    assert dr.env.cfg.actions["joint_pos"].max_delay_steps == 1 != own.env.cfg.actions["joint_pos"].max_delay_steps

    assert main(["eval", str(run), "--task", "hand-cube-dr", "--episodes", "4", "--num-envs", "4", "--json"]) == 0
    result = json.loads(capfd.readouterr().out)
    assert (result["task"], result["policy_task"]) == ("hand-cube-dr", "hand-cube")
    assert result["episodes"] == 4 and "consecutive_successes_mean" in result
    # naming the run's own task is the plain evaluation
    assert main(["eval", str(run), "--task", "hand-cube", "--episodes", "4", "--num-envs", "4", "--json"]) == 0
    assert "policy_task" not in json.loads(capfd.readouterr().out)

    line = _one_error_line(_in_process(capfd, "eval", str(run), "--task", "cartpole", "--num-envs", "2"))
    assert "--task cartpole" in line and "'hand-cube' policy" in line
    line = _one_error_line(_in_process(capfd, "eval", str(run), "--task", "no-such-task"))
    assert "unknown task 'no-such-task'" in line
