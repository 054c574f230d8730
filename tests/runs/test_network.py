"""A trained run's network comes from its checkpoint, not from today's defaults: a run whose task's
default network has changed since it was trained still evaluates and resumes, and a new run
`--init-from` another takes the source's network unless its own command line sets one."""

from __future__ import annotations

import json

import pytest
import torch

from canter.cli.main import main
from canter.core.errors import CanterError
from canter.rl.checkpoint import load_checkpoint
from canter.rl.config import PolicyCfg
from canter.rl.factory import make_policy
from canter.rl.runner import OnPolicyRunner
from canter.runs.args import cpu_physics, make_env, parse_train_args
from canter.runs.load import load_run
from canter.runs.network import saved_hidden_dims

from ..cli.test_train import SMALL

SIZES = ["--agent.policy.actor-hidden-dims", "16", "--agent.policy.critic-hidden-dims", "8", "4"]


def test_saved_hidden_dims_reads_the_mlps_of_a_policy_state():
    shapes = {"policy": (5,), "critic": (7,)}
    cfg = PolicyCfg(actor_hidden_dims=(32, 16), critic_hidden_dims=(8,), critic_obs_groups=("critic",))
    policy = make_policy(shapes, 3, cfg, init_generator=torch.Generator().manual_seed(0))
    assert saved_hidden_dims(policy.state_dict()) == {"actor": (32, 16), "critic": (8,)}
    linear = make_policy(shapes, 3, PolicyCfg(actor_hidden_dims=(), critic_hidden_dims=()),
                         init_generator=torch.Generator().manual_seed(0))
    assert saved_hidden_dims(linear.state_dict()) == {"actor": (), "critic": ()}
    # a layout that is not build_mlp's (a gap in the indices) is left alone
    assert saved_hidden_dims({"actor.0.weight": torch.zeros(4, 5), "actor.4.weight": torch.zeros(3, 4)}) == {}


def test_a_run_keeps_its_network_when_the_task_defaults_change(tmp_path, capsys):
    run = tmp_path / "run"
    assert main(["train", "cartpole", "--run-dir", str(run), *SMALL, "--max-iterations", "1", *SIZES]) == 0
    path = run / "command.json"
    command = json.loads(path.read_text())
    assert command["overrides"] == SIZES
    command["overrides"] = []  # as if 16 and 8-4 had been cartpole's defaults when it was trained
    path.write_text(json.dumps(command))

    _, args, runner = load_run(run, num_envs=2)  # what eval, play and export rebuild
    assert args.agent.policy.actor_hidden_dims == (16,) and args.agent.policy.critic_hidden_dims == (8, 4)
    saved = load_checkpoint(run / "checkpoint.pt")["algorithm"]["policy"]
    for key, value in runner.algorithm.policy.state_dict().items():
        assert torch.equal(value, saved[key]), key

    assert main(["train", "--resume", str(run), "--max-iterations", "2", "--quiet"]) == 0
    assert load_checkpoint(run / "checkpoint.pt")["iteration"] == 2

    # a runner built with other sizes, handed the checkpoint directly: the error names the layer
    args = parse_train_args("cartpole", ["--num-envs", "2", "--quiet"])
    other = OnPolicyRunner(make_env(args), args.agent, tmp_path / "other", seed=0, task="cartpole",
                           cpu_physics=cpu_physics(args))
    width = args.agent.policy.actor_hidden_dims[0]
    with pytest.raises(CanterError, match=rf"holds another policy: actor\.0\.bias is \(16,\) there, \({width},\) here"):
        other.load_policy(run / "checkpoint.pt")


def test_init_from_takes_the_source_network_unless_the_command_line_sets_one(tmp_path, capsys):
    source = tmp_path / "source"
    assert main(["train", "cartpole", "--run-dir", str(source), *SMALL, "--max-iterations", "1", *SIZES]) == 0
    capsys.readouterr()
    new = tmp_path / "new"
    assert main(["train", "cartpole", "--run-dir", str(new), *SMALL, "--max-iterations", "1",
                 "--init-from", str(source)]) == 0
    assert "every parameter copied" in capsys.readouterr().out
    # recorded in the new run's command, so that it resumes, evaluates and exports with them
    assert json.loads((new / "command.json").read_text())["overrides"] == SIZES
    # a size given on the command line is the user's: kept, and the mismatch is one line
    other = tmp_path / "other"
    with pytest.raises(CanterError, match="the first layer has 16 units there and 12 here"):
        main(["train", "cartpole", "--run-dir", str(other), *SMALL, "--max-iterations", "1", "--init-from", str(source),
              "--agent.policy.actor-hidden-dims", "12"])
    assert not other.exists()


def test_init_from_a_linear_head_records_empty_sizes(tmp_path, capsys):
    linear = ["--agent.policy.actor-hidden-dims", "--agent.policy.critic-hidden-dims"]
    source = tmp_path / "source"
    assert main(["train", "cartpole", "--run-dir", str(source), *SMALL, "--max-iterations", "1", *linear]) == 0
    new = tmp_path / "new"
    assert main(["train", "cartpole", "--run-dir", str(new), *SMALL, "--max-iterations", "1",
                 "--init-from", str(source)]) == 0
    assert "every parameter copied" in capsys.readouterr().out
    assert json.loads((new / "command.json").read_text())["overrides"] == linear
    # and the run resumes with the linear network
    assert main(["train", "--resume", str(new), "--max-iterations", "2", "--quiet"]) == 0
    saved = load_checkpoint(new / "checkpoint.pt")
    assert saved["iteration"] == 2
    assert saved_hidden_dims(saved["algorithm"]["policy"]) == {"actor": (), "critic": ()}
