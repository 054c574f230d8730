"""`canter train TASK --init-from RUN`: a new run starts from another run's policy. Where this task's
observation groups extend the source's (dog-rough = dog-flat's terms + a height scan), the source's
columns keep their weights and the new ones start at zero, so the new policy acts and values exactly
as the source on the source's observations; one-line errors for what cannot be mapped."""

from __future__ import annotations

import pytest
import torch

from canter.cli.main import main
from canter.core.errors import CanterError
from canter.rl.checkpoint import load_checkpoint, save_atomic
from canter.rl.runner import OnPolicyRunner
from canter.runs.args import cpu_physics, make_env, parse_train_args
from canter.runs.init_from import init_policy
from canter.runs.load import load_run

from ..cli.test_train import SMALL, _in_process, _one_error_line


def _runner(task: str, run_dir, num_envs: int = 4) -> OnPolicyRunner:
    args = parse_train_args(task, ["--num-envs", str(num_envs), "--quiet"])
    return OnPolicyRunner(make_env(args), args.agent, run_dir, seed=1, task=task, cpu_physics=cpu_physics(args))


def test_rough_starts_from_flat_and_acts_as_flat_on_flat_inputs(tmp_path, capsys):
    flat = tmp_path / "flat"
    assert main(["train", "dog-flat", "--run-dir", str(flat), *SMALL, "--max-iterations", "2"]) == 0
    _, _, source = load_run(flat, num_envs=4)
    rough = _runner("dog-rough", tmp_path / "rough")
    line = init_policy(rough, flat)
    assert line.startswith(f"initialized from {flat / 'checkpoint.pt'}: inputs grown (policy 48 -> 235, critic ")
    ours, theirs = rough.algorithm.policy, source.algorithm.policy
    weight = ours.state_dict()["actor.0.weight"]
    assert torch.equal(weight[:, :48], theirs.state_dict()["actor.0.weight"]) and not weight[:, 48:].any()
    assert torch.equal(ours.state_dict()["std"], theirs.state_dict()["std"])
    # Adam's state grows with the network: the source's moments, step counts and adaptive rate, the new columns'
    # moments zero (a fresh Adam's first sign-sized steps shook a trained policy to a KL of 2-20, BENCHMARKS.md §6)
    assert "the optimizer's state too, learning rate" in line and line.endswith("the new columns' moments at zero")
    source_state = load_checkpoint(flat / "checkpoint.pt")["algorithm"]
    assert float(rough.algorithm.learning_rate) == float(source_state["learning_rate"])
    saved, grown = source_state["optimizer"]["state"], rough.algorithm.optimizer.state_dict()["state"]
    names = [name for name, _ in ours.named_parameters()]
    assert set(grown) == set(saved) == set(range(len(names)))
    for index, name in enumerate(names):
        assert float(grown[index]["step"]) == float(saved[index]["step"]) == 2 * 5 * 4  # 2 iterations of 5 x 4
        for key in ("exp_avg", "exp_avg_sq"):
            mine, source = grown[index][key], saved[index][key]
            if name == "actor.0.weight":
                assert torch.equal(mine[:, :48], source) and source.any() and not mine[:, 48:].any()
            elif name == "critic.0.weight":  # the source's columns where the weights have them, zero in the new ones
                new_columns = ~ours.state_dict()[name].any(dim=0)
                assert mine.shape == ours.state_dict()[name].shape and not mine[:, new_columns].any()
                assert torch.equal(mine[:, ~new_columns], source)
            else:
                assert torch.equal(mine, source), (name, key)
    for key, value in theirs.state_dict().items():
        if not key.endswith("0.weight"):
            assert torch.equal(ours.state_dict()[key], value), key
    obs, _ = rough.env.reset()
    scan_free = {"policy": obs["policy"][:, :48], "critic": obs["critic"][:, : theirs.observation_shapes["critic"][0]]}
    with torch.no_grad():
        torch.testing.assert_close(ours.act_inference(obs), theirs.act_inference(scan_free), rtol=0, atol=1e-6)
        torch.testing.assert_close(ours.evaluate(obs), theirs.evaluate(scan_free), rtol=0, atol=1e-5)
    # a run from the command line: it says so, and trains on
    capsys.readouterr()
    assert main(["train", "dog-rough", "--run-dir", str(tmp_path / "cli"), *SMALL, "--max-iterations", "1",
                 "--init-from", str(flat)]) == 0
    assert "inputs grown (policy 48 -> 235" in capsys.readouterr().out
    # the same task: every parameter copied
    same = _runner("dog-flat", tmp_path / "same")
    assert "every parameter copied, the optimizer's state too" in init_policy(same, flat / "checkpoint.pt")
    assert torch.equal(same.algorithm.policy.state_dict()["actor.0.weight"], theirs.state_dict()["actor.0.weight"])


def test_what_cannot_be_mapped_is_one_line(tmp_path, capfd):
    cartpole = tmp_path / "cartpole"
    assert main(["train", "cartpole", "--run-dir", str(cartpole), *SMALL, "--max-iterations", "1"]) == 0
    with pytest.raises(CanterError, match=r"--init-from .*cartpole"):
        init_policy(_runner("dog-flat", tmp_path / "a"), cartpole)
    line = _one_error_line(_in_process(capfd, "train", "dog-flat", "--run-dir", str(tmp_path / "b"), *SMALL,
                                   "--init-from", str(tmp_path / "nothing")))
    assert f"--init-from: no checkpoint at {tmp_path / 'nothing'}" in line
    with pytest.raises(CanterError, match="--init-from: not with algo ga3c"):
        main(["train", "cartpole", "--run-dir", str(tmp_path / "c"), *SMALL, "--algo", "ga3c", "--init-from", str(cartpole)])
    assert not (tmp_path / "b").exists() and not (tmp_path / "c").exists()


def test_the_same_network_brings_its_optimizer_state_and_rate(tmp_path, capfd):
    """Fine-tuning one network on another task: Adam's moments and step counts come with the policy,
    and with the adaptive schedule the rate the source had settled on, so the first update continues
    the source's optimizer instead of a fresh Adam's sign-sized steps; --init-fresh-optimizer starts
    afresh."""
    source = tmp_path / "source"
    assert main(["train", "cartpole", "--run-dir", str(source), *SMALL, "--max-iterations", "2"]) == 0
    payload = load_checkpoint(source / "checkpoint.pt")
    payload["algorithm"]["learning_rate"] = torch.tensor(3.7e-4)  # a rate the config cannot give by chance
    save_atomic(payload, tmp_path / "settled.pt")
    saved = payload["algorithm"]["optimizer"]["state"]
    assert saved and all(float(entry["step"]) == 2 * 5 * 4 for entry in saved.values())  # 2 iterations of cartpole's 5 x 4

    runner = _runner("cartpole", tmp_path / "copy")
    assert init_policy(runner, tmp_path / "settled.pt").endswith("the optimizer's state too, learning rate 0.00037")
    learner = runner.algorithm
    assert float(learner.learning_rate) == pytest.approx(3.7e-4)
    assert all(group["lr"] is learner.learning_rate for group in learner.optimizer.param_groups)  # still shared
    ours = learner.optimizer.state_dict()["state"]
    assert set(ours) == set(saved)
    for index, entry in saved.items():
        for key in ("step", "exp_avg", "exp_avg_sq"):
            assert torch.equal(ours[index][key], entry[key]), (index, key)
    runner.cfg.max_iterations = 1
    runner.learn()  # and it trains on from there: one iteration more of Adam's steps on every parameter
    assert all(float(entry["step"]) == 2 * 5 * 4 + 5 * 4 for entry in learner.optimizer.state_dict()["state"].values())

    fresh = _runner("cartpole", tmp_path / "fresh")
    assert init_policy(fresh, tmp_path / "settled.pt", optimizer=False).endswith("every parameter copied, the optimizer fresh")
    assert not fresh.algorithm.optimizer.state_dict()["state"]
    assert float(fresh.algorithm.learning_rate) == pytest.approx(fresh.algorithm.cfg.learning_rate)

    capfd.readouterr()
    assert main(["train", "cartpole", "--run-dir", str(tmp_path / "cli"), *SMALL, "--max-iterations", "1",
                 "--init-from", str(source), "--init-fresh-optimizer"]) == 0
    assert "every parameter copied, the optimizer fresh" in capfd.readouterr().out
    # a run started that way resumes from its own checkpoint (the flag is only how a new run starts)
    assert main(["train", "--resume", str(tmp_path / "cli"), "--max-iterations", "2", "--quiet"]) == 0
    assert "initialized from" not in capfd.readouterr().out
    line = _one_error_line(_in_process(capfd, "train", "cartpole", "--run-dir", str(tmp_path / "alone"), *SMALL, "--init-fresh-optimizer"))
    assert "--init-fresh-optimizer: only with --init-from" in line
    assert not (tmp_path / "alone").exists()
