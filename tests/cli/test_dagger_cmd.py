"""`canter train --algo dagger`, `--teacher`, `--photos` and `canter eval`'s endings: a DAgger run from
the task's scripted expert, a run distilled from a trained teacher, and one-line errors for a teacher
of another task, a task without an expert, a photo folder that does not exist."""

from __future__ import annotations

import json

import pytest
import torch

from canter.cli.main import main
from canter.core.errors import CanterError, ConfigError
from canter.rl.checkpoint import load_checkpoint

from .test_train import SMALL, _in_process, _one_error_line

TINY_DAGGER = ["--agent.algo.num-steps-per-env", "4", "--agent.algo.num-mini-batches", "2",
               "--agent.algo.dagger.dataset-size", "64"]


def test_dagger_from_the_scripted_expert_then_eval_on_unseen_photos(tmp_path, capsys):
    run = tmp_path / "grasp"
    assert main(["train", "arm-grasp", "--run-dir", str(run), "--num-envs", "4", "--quiet", "--max-iterations", "2",
                 *TINY_DAGGER]) == 0
    payload = load_checkpoint(run / "checkpoint.pt")
    assert payload["algorithm"]["algo"] == "dagger" and payload["algorithm"]["dataset"]["size"] == 32
    assert payload["algorithm"]["expert"] is None  # a feedback law of the state: no phase or timer to save
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


def test_distillation_from_a_teacher_run_and_teachers_of_another_task(tmp_path, capfd):
    teacher = tmp_path / "teacher"
    assert main(["train", "cartpole", "--run-dir", str(teacher), *SMALL, "--max-iterations", "1"]) == 0
    student = tmp_path / "student"
    assert main(["train", "cartpole", "--run-dir", str(student), *SMALL, "--max-iterations", "2", "--algo", "dagger",
                 "--teacher", str(teacher), "--agent.algo.dagger.beta-initial", "0"]) == 0
    assert load_checkpoint(student / "checkpoint.pt")["algorithm"]["dagger_iteration"] == 2
    line = _one_error_line(_in_process(capfd, "train", "ant", "--run-dir", str(tmp_path / "a"), *SMALL, "--algo", "dagger",
                                   "--teacher", str(teacher)))
    assert f"--teacher {teacher} is a 'cartpole' run; this run is 'ant'" in line
    line = _one_error_line(_in_process(capfd, "train", "ant", "--run-dir", str(tmp_path / "b"), *SMALL, "--algo", "dagger"))
    assert "task 'ant' has no scripted expert" in line
    with pytest.raises(CanterError, match="only algo dagger learns from a teacher"):
        main(["train", "cartpole", "--run-dir", str(tmp_path / "d"), *SMALL, "--teacher", str(teacher)])
    assert not (tmp_path / "a").exists() and not (tmp_path / "d").exists()  # nothing created on a bad command


def test_a_blind_dog_distilled_from_a_dog_rough_teacher(dog_rough_run, tmp_path, capfd):
    from canter.rl.checkpoint import load_checkpoint as load
    from canter.runs.args import make_env, parse_train_args
    from canter.runs.load import teacher_expert
    from canter.tasks.dog.env_cfg import BLIND_HISTORY

    teacher = dog_rough_run
    # the student's env: the teacher's groups (height scan included) and the blind history
    env = make_env(parse_train_args("dog-rough-blind", ["--num-envs", "4", "--quiet"]))
    shapes = env.observation_shapes
    assert shapes["policy"] == make_env(parse_train_args("dog-rough", ["--num-envs", "4", "--quiet"])).observation_shapes["policy"]
    assert shapes["proprio"] == ((3 + 3 + 3 + 12 + 12 + 12) * BLIND_HISTORY,)  # no height scan, no linear velocity
    obs, _ = env.reset()
    # the teacher labels from its own groups: its action on the "policy" group, whatever "proprio" holds
    expert = teacher_expert(teacher, "dog-rough-blind", env)
    labels = expert(obs)
    assert torch.equal(labels, expert({**obs, "proprio": torch.zeros_like(obs["proprio"])}))
    assert not torch.equal(labels, expert({**obs, "policy": torch.zeros_like(obs["policy"])}))
    student = tmp_path / "student"
    assert main(["train", "dog-rough-blind", "--run-dir", str(student), *SMALL, "--max-iterations", "2",
                 "--teacher", str(teacher), "--agent.algo.dagger.dataset-size", "512"]) == 0
    payload = load(student / "checkpoint.pt")
    assert payload["algorithm"]["algo"] == "dagger" and payload["algorithm"]["dagger_iteration"] == 2
    first = next(v for k, v in payload["algorithm"]["policy"].items() if k.startswith("actor.") and k.endswith("weight"))
    assert first.shape[1] == shapes["proprio"][0]  # the student's MLP reads the history alone
    capfd.readouterr()
    assert main(["eval", str(student), "--episodes", "2", "--num-envs", "2", "--json"]) == 0
    assert "walked_out_mean" in capfd.readouterr().out
    line = _one_error_line(_in_process(capfd, "train", "dog-rough-blind", "--run-dir", str(tmp_path / "a"), *SMALL))
    assert "task 'dog-rough-blind' learns from a trained 'dog-rough' run: name it with --teacher RUN_DIR" in line
    cartpole = tmp_path / "cartpole"
    assert main(["train", "cartpole", "--run-dir", str(cartpole), *SMALL, "--max-iterations", "1"]) == 0
    with pytest.raises(CanterError, match="is a 'cartpole' run; this run is 'dog-rough-blind' \\(its teacher: a 'dog-rough-blind' or 'dog-rough' run\\)"):
        main(["train", "dog-rough-blind", "--run-dir", str(tmp_path / "b"), *SMALL, "--teacher", str(cartpole)])
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_bench_train_runs_a_dagger_task_with_its_scripted_expert():
    """`canter bench train arm-grasp` imitates the task's expert, as `canter train` does (it stopped
    at "algo dagger needs an expert" before)."""
    from canter.bench.train import run_train_bench

    result = run_train_bench("arm-grasp", 0.5, ["--num-envs", "4", "--agent.algo.num-steps-per-env", "4",
                                                "--agent.algo.dagger.dataset-size", "64"])
    assert result.algo == "dagger" and result.iterations >= 2 and result.env_steps == result.iterations * 16
