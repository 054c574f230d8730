"""`canter train TASK --algo ga3c`: a run directory like PPO's that eval reads, resumes that keep the
model, optimizer and counters, a signal that saves, and one-line refusals of what GA3C cannot run."""

from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys
import time

import pytest
import torch

from canter.cli.main import main
from canter.core.errors import CanterError
from canter.rl.checkpoint import load_checkpoint

ENTRY = "from canter.cli.main import entrypoint; entrypoint()"
GA3C = ["--algo", "ga3c", "--num-envs", "16", "--quiet", "--agent.algo.ga3c.adjust-every-s", "0.5",
        "--agent.algo.ga3c.num-agents", "2", "--agent.algo.num-steps-per-env", "8"]


def _rows(run_dir):
    with open(run_dir / "progress.csv") as file:
        return list(csv.DictReader(file))


def test_a_ga3c_run_trains_to_its_budget_resumes_where_it_stopped_and_is_evaluated(tmp_path, capsys):
    run_dir = tmp_path / "run"
    # cartpole: 16 envs x 8 steps = 128 agent steps per iteration; 20 iterations = 2,560 steps
    assert main(["train", "cartpole", "--run-dir", str(run_dir), *GA3C, "--max-iterations", "20"]) == 0
    first = load_checkpoint(run_dir / "checkpoint.pt")
    assert first["kind"] == "ga3c" and first["iteration"] >= 20
    state = first["algorithm"]["ga3c"]
    assert state["env_steps"] >= 20 * 128 and state["version"] > 0 and state["optimizer"]["state"]
    assert len(_rows(run_dir)) == len(state["history"]) >= 1
    assert (run_dir / "training_curve.png").stat().st_size > 0

    assert main(["train", "--resume", str(run_dir), "--max-iterations", "100"]) == 0
    assert "resumed at iteration" in capsys.readouterr().out.replace("\n", "")
    second = load_checkpoint(run_dir / "checkpoint.pt")
    resumed = second["algorithm"]["ga3c"]
    assert second["iteration"] >= 100 and resumed["version"] > state["version"]
    assert resumed["wall_time_s"] > state["wall_time_s"] and resumed["env_steps"] > state["env_steps"]
    assert len(resumed["history"]) > len(state["history"])  # the curves go on from the first session's
    rows = _rows(run_dir)
    assert [float(r["wall_time_s"]) for r in rows] == sorted(float(r["wall_time_s"]) for r in rows)
    # Adam's step count went on from the saved one, not from 0
    steps = [float(s["step"]) for s in resumed["optimizer"]["state"].values()]
    assert min(steps) == resumed["version"]
    # the policy of a GA3C run is what canter eval plays
    assert main(["eval", str(run_dir), "--episodes", "8", "--num-envs", "8"]) == 0
    assert torch.equal(second["algorithm"]["policy"]["actor.0.weight"], resumed["policy"]["actor.0.weight"])


def test_sigterm_stops_a_ga3c_run_with_its_checkpoint_and_the_resume_line(tmp_path):
    run_dir = tmp_path / "run"
    process = subprocess.Popen([sys.executable, "-c", ENTRY, "train", "cartpole", "--run-dir", str(run_dir), *GA3C,
                                "--max-iterations", "1000000"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env={**os.environ})
    deadline = time.monotonic() + 120
    while not (run_dir / "progress.csv").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(1.0)
    sent = time.monotonic()
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=60)
    assert time.monotonic() - sent < 30
    assert process.returncode == 128 + signal.SIGTERM, stderr
    iteration = load_checkpoint(run_dir / "checkpoint.pt")["iteration"]
    assert iteration > 0
    assert (f"interrupted by SIGTERM at iteration {iteration}; checkpoint saved; resume with: canter train --resume "
            f"{run_dir}") in stderr


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--nproc", "2"], "--algo ga3c: one process"),
        (["--num-envs", "10"], "agent.algo.ga3c.num_agents: 10 envs cannot be split evenly over 4 agents"),
        (["--agent.policy.rnn-type", "gru"], "--algo ga3c: feed-forward policies only"),
        (["--backend", "warp"], "--algo ga3c: steps the cpu backend"),
        (["--agent.algo.schedule", "linear"], "algo ga3c keeps learning_rate fixed"),
    ],
)
def test_what_ga3c_cannot_run_is_one_line_and_writes_nothing(tmp_path, extra, message):
    run_dir = tmp_path / "run"
    with pytest.raises(CanterError, match=message):
        main(["train", "cartpole", "--run-dir", str(run_dir), "--algo", "ga3c", "--quiet", *extra])
    assert not run_dir.exists()


def test_a_ga3c_config_on_the_synchronous_runner_is_refused(tmp_path):
    with pytest.raises(CanterError, match="algo ga3c trains on its own asynchronous runner"):
        main(["bench", "train", "cartpole", "--num-envs", "8", "--max-time", "1", "--algo", "ga3c"])


def test_atari_anneals_its_rate_with_ppo_and_ga3c_keeps_it_fixed():
    from canter.runs.args import check_train_args, parse_train_args

    ppo = parse_train_args("atari-pong", [])
    assert (ppo.agent.algo.schedule, ppo.agent.algo.min_learning_rate) == ("linear", 0.0)
    ga3c = parse_train_args("atari-pong", ["--algo", "ga3c", "--num-envs", "16"])
    assert ga3c.agent.algo.schedule == "fixed"  # the task's PPO default does not carry over
    check_train_args(ga3c)
    asked = parse_train_args("atari-pong", ["--algo", "ga3c", "--num-envs", "16", "--agent.algo.schedule", "linear"])
    with pytest.raises(CanterError, match="algo ga3c keeps learning_rate fixed"):
        check_train_args(asked)


def test_bench_ga3c_compares_both_at_a_fixed_rate():
    from canter.bench.ga3c import fixed_rate_argv

    assert fixed_rate_argv("atari-pong", ["--num-envs", "16"]) == ["--agent.algo.schedule", "fixed", "--num-envs", "16"]
    assert fixed_rate_argv("cartpole", ["--num-envs", "16"]) == ["--num-envs", "16"]  # adaptive stays
    mine = ["--agent.algo.schedule", "adaptive"]
    assert fixed_rate_argv("atari-pong", mine) == mine


def test_a_ga3c_run_whose_output_reader_went_away_stops_as_sigpipe_with_its_checkpoint(tmp_path, capfd, monkeypatch):
    """As PPO's runner (tests/cli/test_train.py): a closed pipe on stdout stops the run after the
    period under way, with its checkpoint, the resume line and exit 128 + SIGPIPE."""
    from canter.cli.main import entrypoint
    from canter.rl import logger as logger_module
    from tests.cli.test_train import _ReaderGoneAt

    monkeypatch.setattr(logger_module, "silence_output", lambda *streams: None)
    stdout = _ReaderGoneAt("it ")  # the first progress line: the reader is gone once training runs
    monkeypatch.setattr(sys, "stdout", stdout)
    run_dir = tmp_path / "run"
    capfd.readouterr()
    with pytest.raises(SystemExit) as exit_:
        entrypoint(["train", "cartpole", "--run-dir", str(run_dir), *[a for a in GA3C if a != "--quiet"],
                    "--max-iterations", "100000", "--max-time", "60"])
    assert exit_.value.code == 128 + signal.SIGPIPE and stdout.closed_pipe
    saved = load_checkpoint(run_dir / "checkpoint.pt")
    err = capfd.readouterr().err.strip()
    assert err == (f"interrupted by SIGPIPE at iteration {saved['iteration']}; checkpoint saved; "
                   f"resume with: canter train --resume {run_dir}")
    assert saved["algorithm"]["ga3c"]["wall_time_s"] < 30  # stopped at its first period, not at --max-time
