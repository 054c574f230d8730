"""`canter eval RUN --task T` (and `canter play --task T`): the run's policy acting in another
registered task's env, e.g. a hand-cube policy on hand-cube-dr's randomized physics (issue 15's
"non-randomized policy evaluated on randomized physics"), or in its own task's env as registered,
without the run's --env.* overrides; a task whose observations or actions do not fit the policy, or
no task at all, is one line and exit 2."""

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


def test_naming_the_runs_own_task_drops_its_env_overrides(tmp_path, capfd):
    from canter.tasks import REGISTRY

    registered = REGISTRY.get("cartpole").env_cfg()
    run = tmp_path / "short"
    assert main(["train", "cartpole", "--run-dir", str(run), *SMALL, "--max-iterations", "1",
                 "--env.episode-length-s", "1.5", "--env.terminations.cart-out-of-bounds.params.bounds", "-1.0", "1.0"]) == 0
    capfd.readouterr()
    assert registered.episode_length_s != 1.5

    _, own_args, own = load_run(run, num_envs=4)
    _, plain_args, plain = load_run(run, num_envs=4, task="cartpole")
    assert own_args.env.episode_length_s == 1.5 and own.env.max_episode_length_s == 1.5
    assert plain_args.env.episode_length_s == registered.episode_length_s == plain.env.max_episode_length_s
    assert plain_args.env.terminations["cart_out_of_bounds"].params == registered.terminations["cart_out_of_bounds"].params
    assert own_args.env.terminations["cart_out_of_bounds"].params["bounds"] == (-1.0, 1.0)
    # the run's own flags still hold (num_envs), and so does its agent: the same weights
    assert plain.env.num_envs == 4 and plain_args.agent == own_args.agent
    mine, theirs = own.algorithm.policy.state_dict(), plain.algorithm.policy.state_dict()
    assert all(torch.equal(mine[k], theirs[k]) for k in mine)
    # 1.5-s episodes under the run's overrides; the registered length without them
    assert main(["eval", str(run), "--episodes", "4", "--num-envs", "4", "--json"]) == 0
    short = json.loads(capfd.readouterr().out)
    assert main(["eval", str(run), "--task", "cartpole", "--episodes", "4", "--num-envs", "4", "--json"]) == 0
    full = json.loads(capfd.readouterr().out)
    assert "policy_task" not in full and short["mean_episode_length"] <= 1.5 / own.env.step_dt + 1e-6
    assert full["mean_episode_length"] > short["mean_episode_length"]

    # an --env.* override the task no longer takes (a term since removed, here written into command.json): the
    # plain evaluation names the run and the way out in one line; --task does not read the run's env overrides
    command_file = run / "command.json"
    saved = json.loads(command_file.read_text())
    saved["overrides"] += ["--env.events.no-such-term.params.scale-range", "1", "1", "--agent.algo.gamma", "0.9"]
    command_file.write_text(json.dumps(saved))
    line = _one_error_line(_in_process(capfd, "eval", str(run), "--episodes", "2", "--num-envs", "2"))
    assert f"{run}: the run's overrides no longer fit task 'cartpole' as registered (unrecognized options: " in line
    assert "--env.events.no-such-term.params.scale-range 1 1" in line and "--task TASK" in line
    _, stale_args, _ = load_run(run, num_envs=4, task="cartpole")
    assert stale_args.env.episode_length_s == registered.episode_length_s and stale_args.agent.algo.gamma == 0.9
    saved["overrides"] += ["--agent.algo.no-such-field", "1"]
    command_file.write_text(json.dumps(saved))
    line = _one_error_line(_in_process(capfd, "eval", str(run), "--task", "cartpole", "--episodes", "2"))
    assert f"{run}: the run's --agent.* overrides no longer fit task 'cartpole' as registered (unrecognized options: " in line
    assert "--agent.algo.no-such-field 1" in line and "--env." not in line
