"""`canter bench time-to-target`: marks of training wall time, a fixed-seed evaluation at each, the
first mark that reaches the target, and one-line errors before any training."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from canter.bench.time_to_target import _direction, _reached, plot_time_to_target, run_time_to_target
from canter.core.errors import CanterError


def test_direction_follows_the_metric_unless_given():
    assert _direction("lin_vel_x_abs_error", "auto") == "below"
    assert _direction("ended_by_base_contact", "auto") == "below"
    assert _direction("ended_by_time_out", "auto") == "above"
    assert _direction("ended_by_success", "auto") == "above"
    assert _direction("mean_return", "auto") == "above"
    assert _direction("mean_return", "below") == "below"
    assert _reached(0.1, 0.15, "below") and not _reached(0.2, 0.15, "below")
    assert _reached(5.0, 4.75, "above") and not _reached(float("nan"), 4.75, "above")


def test_marks_evaluation_and_the_first_mark_reaching_the_target(tmp_path):
    # 6 s of training: two marks or more even on a loaded machine, where one iteration (with the
    # first one's warm-up) has taken 3.6 s
    result = run_time_to_target("cartpole", "mean_return", 4.5, 0.1, ["--num-envs", "64"], eval_every_s=1.0,
                                episodes=16, eval_envs=16)
    times = [m["train_wall_s"] for m in result.marks]
    assert len(times) >= 2 and times == sorted(times) and times[-1] >= 6.0
    assert all(m["episodes"] >= 16 for m in result.marks)
    # one mark per second of training: each lies past its second, and no second is skipped
    assert all(t >= k + 1 for k, t in enumerate(times[:-1]))
    first = next((m for m in result.marks if m["mean_return"] >= 4.5), None)
    assert result.time_to_target_s == (None if first is None else first["train_wall_s"])
    assert result.env_steps_to_target == (None if first is None else first["env_steps"])
    assert result.direction == "above" and result.num_envs == 64
    data = result.to_json()
    assert data["marks"] == result.marks and "commit" in data and "machine" not in data
    assert plot_time_to_target(result, tmp_path / "t.png").stat().st_size > 10_000


def test_save_dir_keeps_a_run_that_eval_loads(tmp_path):
    from canter.cli.train_cmd import eval_main
    from canter.rl.checkpoint import load_checkpoint

    run = tmp_path / "run"
    result = run_time_to_target("cartpole", "mean_return", 4.5, 1.0 / 60.0, ["--num-envs", "16"], eval_every_s=0.5,
                                episodes=4, eval_envs=4, save_dir=str(run))
    assert (run / "command.json").is_file() and (run / "config.yaml").is_file()
    # a checkpoint per mark (named by whole minutes: these all round to 0) and the last as checkpoint.pt
    last = load_checkpoint(run / "checkpoint.pt")
    assert last["iteration"] == int(result.marks[-1]["iteration"])
    assert load_checkpoint(run / "checkpoint_0min.pt")["iteration"] == last["iteration"]
    assert eval_main([str(run), "--episodes", "4", "--num-envs", "4"]) == 0
    with pytest.raises(CanterError, match="exists and is not empty"):
        run_time_to_target("cartpole", "mean_return", 4.5, 0.01, ["--num-envs", "16"], save_dir=str(run))


def test_unknown_metric_fails_before_training():
    with pytest.raises(CanterError, match=r"has no metric 'speed'.*lin_vel_x_abs_error"):
        run_time_to_target("dog-flat", "speed", 1.0, 1.0, ["--num-envs", "8"])
    done = subprocess.run([sys.executable, "-m", "canter", "bench", "time-to-target", "cartpole", "--metric", "x",
                           "--target", "1"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1].startswith("canter: error: --metric: cartpole has no metric 'x'")
    assert "Traceback" not in done.stderr


def test_several_metrics_must_all_reach_the_target():
    result = run_time_to_target("cartpole", "mean_return,mean_episode_length", 4.5, 0.03, ["--num-envs", "64"],
                                eval_every_s=1.0, episodes=16, eval_envs=16)
    first = next((m for m in result.marks if m["mean_return"] >= 4.5 and m["mean_episode_length"] >= 4.5), None)
    assert result.time_to_target_s == (None if first is None else first["train_wall_s"])
    with pytest.raises(CanterError, match="mixes metrics"):
        run_time_to_target("dog-flat", "mean_return,lin_vel_x_abs_error", 1.0, 1.0, ["--num-envs", "8"])


def test_json_output(tmp_path):
    done = subprocess.run([sys.executable, "-m", "canter", "bench", "time-to-target", "cartpole", "--metric",
                           "mean_return", "--target", "100", "--minutes", "0.02", "--episodes", "8", "--eval-envs", "8",
                           "--num-envs", "32", "--out", str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-1500:]
    data = json.loads((tmp_path / "time_to_target.json").read_text())
    assert data["time_to_target_s"] is None and data["target"] == 100.0  # cartpole's best return is 5
    assert (tmp_path / "time_to_target.png").exists()


def test_marks_record_where_the_training_curriculum_stood():
    from types import SimpleNamespace

    import torch

    from canter.bench.time_to_target import _curriculum

    env = SimpleNamespace(curriculum_manager=SimpleNamespace(
        state={"goal_range": torch.tensor(0.8), "terrain_levels": torch.tensor([1.0, 2.0, 6.0])}))
    assert _curriculum(env) == pytest.approx({"train_curriculum_goal_range": 0.8, "train_curriculum_terrain_levels": 3.0})
    assert _curriculum(SimpleNamespace()) == {}  # an Atari env has no curriculum


def test_a_stop_signal_keeps_the_marks_and_the_run(tmp_path, monkeypatch):
    """Ctrl-C (or SIGTERM) after the first mark: the run stops there, the checkpoint is saved, the
    JSON and PNG hold the marks so far and say what stopped them, and the exit code is 128 + signal."""
    import os
    import signal

    import canter.bench.time_to_target as module
    from canter.cli.main import main

    real = module.run_time_to_target

    def interrupted(*args, progress=None, **kwargs):
        def at_mark(mark, metric):
            progress(mark, metric)
            os.kill(os.getpid(), signal.SIGINT)  # what Ctrl-C delivers, during the first mark

        return real(*args, progress=at_mark, **kwargs)

    monkeypatch.setattr(module, "run_time_to_target", interrupted)
    previous = signal.getsignal(signal.SIGINT)
    code = main(["bench", "time-to-target", "cartpole", "--metric", "mean_return", "--target", "100", "--minutes", "5",
                 "--eval-every", "0.5", "--episodes", "8", "--eval-envs", "8", "--num-envs", "32",
                 "--out", str(tmp_path / "out"), "--save-dir", str(tmp_path / "run")])
    assert code == 130
    assert signal.getsignal(signal.SIGINT) is previous  # the handler is the caller's again
    data = json.loads((tmp_path / "out" / "time_to_target.json").read_text())
    assert data["stopped_by"] == "SIGINT" and len(data["marks"]) == 1
    assert data["marks"][0]["train_wall_s"] < 60.0  # far short of the 5-minute budget
    assert (tmp_path / "out" / "time_to_target.png").exists()
    assert (tmp_path / "run" / "checkpoint.pt").exists()
