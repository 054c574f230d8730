"""`canter train --algo dagger`, `--teacher`, `--photos` and `canter eval`'s endings: a DAgger run from
the task's scripted expert, a run distilled from a trained teacher, and one-line errors for a teacher
of another task, a task without an expert, a photo folder that does not exist."""

from __future__ import annotations

import json

import pytest

from canter.cli.main import main
from canter.core.errors import CanterError, ConfigError
from canter.rl.checkpoint import load_checkpoint

from .test_train import SMALL, _canter, _one_error_line

TINY_DAGGER = ["--agent.algo.num-steps-per-env", "4", "--agent.algo.num-mini-batches", "2",
               "--agent.algo.dagger.dataset-size", "64"]


def test_dagger_from_the_scripted_expert_then_eval_on_unseen_photos(tmp_path, capsys):
    run = tmp_path / "grasp"
    assert main(["train", "arm-grasp", "--run-dir", str(run), "--num-envs", "4", "--quiet", "--max-iterations", "2",
                 *TINY_DAGGER]) == 0
    payload = load_checkpoint(run / "checkpoint.pt")
    assert payload["algorithm"]["algo"] == "dagger" and payload["algorithm"]["dataset"]["size"] == 32
    assert payload["algorithm"]["expert"] is not None  # the FSM's per-env phase is saved
    capsys.readouterr()
    assert main(["eval", str(run), "--episodes", "2", "--num-envs", "2", "--photos", "unseen", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    endings = {k: v for k, v in result.items() if k.startswith("ended_by_")}
    assert set(endings) == {"ended_by_time_out", "ended_by_success", "ended_by_sphere_off_table"}
    assert sum(endings.values()) == pytest.approx(1.0)
    with pytest.raises(ConfigError, match="photos: no folder at"):
        main(["eval", str(run), "--episodes", "1", "--num-envs", "2", "--photos", str(tmp_path / "none")])
    with pytest.raises(ConfigError, match="--photos: this task composes no camera image over photos"):
        main(["train", "cartpole", "--run-dir", str(tmp_path / "c"), *SMALL, "--photos", "unseen"])


def test_distillation_from_a_teacher_run_and_teachers_of_another_task(tmp_path):
    teacher = tmp_path / "teacher"
    assert main(["train", "cartpole", "--run-dir", str(teacher), *SMALL, "--max-iterations", "1"]) == 0
    student = tmp_path / "student"
    assert main(["train", "cartpole", "--run-dir", str(student), *SMALL, "--max-iterations", "2", "--algo", "dagger",
                 "--teacher", str(teacher), "--agent.algo.dagger.beta-initial", "0"]) == 0
    assert load_checkpoint(student / "checkpoint.pt")["algorithm"]["dagger_iteration"] == 2
    line = _one_error_line(_canter("train", "ant", "--run-dir", str(tmp_path / "a"), *SMALL, "--algo", "dagger",
                                   "--teacher", str(teacher)))
    assert f"--teacher {teacher} is a 'cartpole' run; this run is 'ant'" in line
    line = _one_error_line(_canter("train", "ant", "--run-dir", str(tmp_path / "b"), *SMALL, "--algo", "dagger"))
    assert "task 'ant' has no scripted expert" in line
    with pytest.raises(CanterError, match="only algo dagger learns from a teacher"):
        main(["train", "cartpole", "--run-dir", str(tmp_path / "d"), *SMALL, "--teacher", str(teacher)])
    assert not (tmp_path / "a").exists() and not (tmp_path / "d").exists()  # nothing created on a bad command
