"""Run directories: resume rules, old command.json files."""

from __future__ import annotations

import json

import pytest

from canter.core.errors import CanterError
from canter.runs import rundir
from canter.runs.args import TrainFlags
from canter.runs.rundir import RunCommand, read_command, resumed_command


def _saved(tmp_path) -> RunCommand:
    command = RunCommand(task="cartpole", flags=TrainFlags(num_envs=16, max_iterations=10, max_time=2.0),
                         overrides=["--env.rewards.alive.weight", "2"])
    (tmp_path / "command.json").write_text(command.to_json())
    return read_command(tmp_path)


def test_resume_keeps_the_budget_and_applies_only_what_may_change(tmp_path):
    saved = _saved(tmp_path)
    assert saved.flags.max_iterations == 10 and saved.flags.max_time == 2.0
    kept = resumed_command(saved, TrainFlags(), [], nproc=1)
    assert kept.flags.max_iterations == 10 and kept.flags.max_time == 2.0  # the original budget stays
    more = resumed_command(saved, TrainFlags(max_iterations=14, num_envs=16), ["--agent.save-interval", "3"], nproc=1)
    args = more.train_args()
    assert args.agent.max_iterations == 14 and args.agent.save_interval == 3 and args.env.num_envs == 16
    assert args.env.rewards["alive"].weight == 2.0  # the run's own overrides still apply
    cases = [
        ((TrainFlags(num_envs=32), []), "--num-envs cannot change on resume"),
        ((TrainFlags(seed=5), []), "--seed cannot change on resume"),
        ((TrainFlags(), ["--env.rewards.alive.weight", "3"]), "--env.rewards.alive.weight cannot change on resume"),
        ((TrainFlags(), ["--agent.algo.learning-rate", "0.002"]), "--agent.algo.learning-rate cannot change"),
        ((TrainFlags(init_fresh_optimizer=True), []), "--init-fresh-optimizer: not on resume"),
    ]
    for (flags, overrides), message in cases:
        with pytest.raises(CanterError, match=message):
            resumed_command(saved, flags, overrides, nproc=1)
    with pytest.raises(CanterError, match="resume with --nproc 1"):
        resumed_command(saved, TrainFlags(), [], nproc=2)


def test_an_old_command_json_with_argv_is_still_read(tmp_path):
    argv = ["--num-envs", "8", "--run-dir", "x", "--env.rewards.alive.weight", "2", "--max-iterations", "3"]
    (tmp_path / "command.json").write_text(json.dumps({"task": "cartpole", "argv": argv}))
    command = read_command(tmp_path)
    assert command.flags.num_envs == 8 and command.flags.max_iterations == 3
    assert command.overrides == ["--env.rewards.alive.weight", "2"]
    (tmp_path / "command.json").write_text("{cut off")
    with pytest.raises(CanterError, match="corrupt"):
        read_command(tmp_path)


def test_a_run_directory_that_cannot_be_made_is_refused_before_the_env_is_built(tmp_path, monkeypatch):
    a_file = tmp_path / "a_file"
    a_file.write_text("kept")
    with pytest.raises(CanterError, match=r"^cannot create run directory .*/a_file/x/y: .*/a_file is a file$"):
        rundir.check_new_run_dir(a_file / "x" / "y")
    rundir.check_new_run_dir(tmp_path / "new" / "run")  # a folder that can be made passes, and is not made
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a_file"]
    monkeypatch.setattr(rundir.os, "access", lambda path, mode: str(path) != str(tmp_path))
    with pytest.raises(CanterError, match=r"^cannot create run directory .*/new/run: .* is not writable$"):
        rundir.check_new_run_dir(tmp_path / "new" / "run")
    assert a_file.read_text() == "kept"
