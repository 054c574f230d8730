"""`canter train` as a user drives it: one-line errors, nothing written before the checks pass,
resume rules, the run-directory lock, foreign checkpoints, GL settings and interrupts."""

from __future__ import annotations

import inspect
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from canter.cli.main import main
from canter.core.errors import CanterError
from canter.rl.checkpoint import load_checkpoint
from canter.rl.runner import OnPolicyRunner
from canter.runs.args import TrainFlags
from canter.runs.launch import interrupt_signal
from canter.runs.rundir import RunCommand

ENTRY = "from canter.cli.main import entrypoint; entrypoint()"
SMALL = ["--num-envs", "8", "--quiet", "--max-time", "100"]


def _canter(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", ENTRY, *args], capture_output=True, text=True, timeout=300,
                          env={**os.environ, **(env or {})}, cwd=cwd)


def _in_process(capfd: pytest.CaptureFixture[str], *args: str) -> subprocess.CompletedProcess:
    """The console script's entry point in this process, its output captured at the file descriptors
    (what a terminal would show, tyro's and rich's included): the same exit code and lines as
    `_canter`, without the ~6 s a new process spends importing canter on a slow 2-core machine."""
    from canter.cli.main import entrypoint

    capfd.readouterr()
    try:
        entrypoint(list(args))
        code = 0
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else 1
    out, err = capfd.readouterr()
    return subprocess.CompletedProcess(list(args), code, out, err)


def _one_error_line(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and "╭" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(errors) == 1 and errors[0].startswith("canter: error: "), result.stderr
    return errors[0]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("train", "cartpole", "--agent.algo.learning-rate", "abc"), "--agent.algo.learning-rate: invalid value 'abc'"),
        (("train", "cartpole", "--env.nosuch", "1"), "unrecognized options: --env.nosuch 1"),
        (("train", "--resume", "D", "--max-iterations", "abc"), "--max-iterations: invalid value 'abc'"),
        (("train", "cartpole", "--nproc", "1.9"), "--nproc: invalid value '1.9' (expected an integer)"),
        (("bench", "train", "cartpole", "--nproc", "1.9"), "--nproc: invalid value '1.9' (expected an integer)"),
        (("train", "cartpole", "--max-iteratons", "14"), "unrecognized options: --max-iteratons"),
        (("bench", "env", "--task", "ant"), "the task is the positional TASK"),
        (("bench", "train", "cartpole", "--raw-every", "2", "--nproc", "2"),
         "--raw-every: one process only (raw Batch runs beside one rank's training)"),
        (("trian",), "unknown command 'trian'"),
        (("train", "cartpole", "--agent.algo.symmetry", "augment", "--max-iterations", "1"),
         "algo.symmetry: 'augment': this task declares no left-right mirror"),
    ],
)
def test_every_parse_failure_is_one_line_with_exit_code_2(args, message, capfd):
    assert message in _one_error_line(_in_process(capfd, *args))


def test_a_parse_failure_of_the_console_process_is_one_line_with_exit_code_2():
    """The same through a process of its own, as a shell runs it."""
    line = _one_error_line(_canter("train", "cartpole", "--agent.algo.learning-rate", "abc"))
    assert "--agent.algo.learning-rate: invalid value 'abc'" in line


def test_help_imports_no_torch():
    code = "import sys; from canter.cli.main import main; main(['--help']); print('torch' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and result.stdout.strip().endswith("False")
    assert "train" in result.stdout and "bench" in result.stdout


def test_an_error_found_before_training_leaves_no_run_directory(tmp_path):
    run_dir = tmp_path / "run"
    with pytest.raises(CanterError, match=r"agent\.algo\.num_mini_batches: 100000 minibatches exceed the 128 transitions"):
        main(["train", "cartpole", "--run-dir", str(run_dir), *SMALL, "--agent.algo.num-mini-batches", "100000"])
    assert not run_dir.exists()


def test_resume_keeps_the_budget_refuses_trajectory_changes_and_applies_new_budgets(tmp_path):
    run_dir = tmp_path / "run"
    assert main(["train", "cartpole", "--run-dir", str(run_dir), *SMALL, "--max-iterations", "2",
                 "--env.rewards.alive.weight", "2"]) == 0
    refused = [(["--num-envs", "32"], "--num-envs cannot change on resume"), (["--seed", "5"], "--seed cannot change"),
               (["--env.rewards.alive.weight", "3"], "--env.rewards.alive.weight cannot change on resume"),
               (["--max-iteratons", "14"], "unrecognized options: --max-iteratons"),
               (["--nproc", "2"], "resume with --nproc 1")]
    for extra, message in refused:
        with pytest.raises(CanterError, match=message):
            main(["train", "--resume", str(run_dir), *extra])
    assert main(["train", "--resume", str(run_dir)]) == 0  # the original budget (2) holds: nothing to train
    assert load_checkpoint(run_dir / "checkpoint.pt")["iteration"] == 2
    assert main(["train", "cartpole", "--resume", str(run_dir), "--max-iterations", "3", "--env.rewards.alive.weight",
                 "2", "--agent.save-interval", "7"]) == 0
    assert load_checkpoint(run_dir / "checkpoint.pt")["iteration"] == 3
    assert json.loads((run_dir / "command.json").read_text())["flags"]["max_iterations"] == 3


def test_a_directory_without_checkpoint_is_trained_from_iteration_0(tmp_path, capsys):
    command = RunCommand(task="cartpole", flags=TrainFlags(num_envs=8, max_iterations=1, quiet=True))
    (tmp_path / "command.json").write_text(command.to_json())  # what an interrupt during start-up leaves
    assert main(["train", "--resume", str(tmp_path)]) == 0
    assert "has no checkpoint.pt: training it from iteration 0" in capsys.readouterr().out.replace("\n", "")
    assert load_checkpoint(tmp_path / "checkpoint.pt")["iteration"] == 1


def test_a_full_disk_during_training_is_one_line_saying_what_the_run_keeps(tmp_path, capfd, monkeypatch):
    """The second checkpoint cannot be written (torch.save's writer fails, 100 bytes free): one line
    naming the file, the iteration the checkpoint on disk holds and how to go on; resuming then works.
    At the end of the resumed run the curve cannot be written: the line says the new checkpoint is kept."""
    import shutil
    from collections import namedtuple

    from canter.core.files import WriteError
    from canter.rl import checkpoint as checkpoint_module
    from canter.rl import logger as logger_module

    run_dir = tmp_path / "run"
    real_save, saves = checkpoint_module.torch.save, []

    def save(*args, **kwargs):
        saves.append(1)
        if len(saves) == 2:
            raise RuntimeError("PytorchStreamWriter failed writing file data/0: file write failed")
        return real_save(*args, **kwargs)

    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(checkpoint_module.torch, "save", save)
    monkeypatch.setattr(shutil, "disk_usage", lambda _: usage(10**9, 10**9 - 100, 100))
    result = _in_process(capfd, "train", "cartpole", "--run-dir", str(run_dir), *SMALL, "--max-iterations", "4",
                         "--agent.save-interval", "2")
    line = _one_error_line(result)
    assert line.startswith(f"canter: error: cannot write checkpoint {run_dir / 'checkpoint.pt'}: disk full (")
    assert line.endswith(f" bytes needed, 100 free); {run_dir / 'checkpoint.pt'} keeps iteration 2; make room, then: "
                         f"canter train --resume {run_dir}")
    assert load_checkpoint(run_dir / "checkpoint.pt")["iteration"] == 2 and not list(run_dir.glob(".*.tmp"))
    monkeypatch.undo()

    def no_room(fig, path, dpi):
        raise WriteError(f"cannot write {path}: disk full (0 free)")

    monkeypatch.setattr(logger_module, "save_figure", no_room)
    line = _one_error_line(_in_process(capfd, "train", "--resume", str(run_dir)))
    assert line == (f"canter: error: cannot write {run_dir / 'training_curve.png'}: disk full (0 free); "
                    f"{run_dir / 'checkpoint.pt'} keeps iteration 4; make room, then: canter train --resume {run_dir}")
    assert load_checkpoint(run_dir / "checkpoint.pt")["iteration"] == 4


def test_a_new_run_whose_files_cannot_be_written_leaves_nothing_behind(tmp_path, capfd, monkeypatch):
    from canter.core.files import WriteError
    from canter.runs import rundir

    def no_room(path, text):
        raise WriteError(f"cannot write {path}: disk full (0 free)")

    monkeypatch.setattr(rundir, "write_text_atomic", no_room)
    run_dir = tmp_path / "new" / "run"
    line = _one_error_line(_in_process(capfd, "train", "cartpole", "--run-dir", str(run_dir), *SMALL))
    assert line == f"canter: error: cannot write {run_dir / 'command.json'}: disk full (0 free)"
    assert not run_dir.exists()
    made = tmp_path / "made"  # a folder the user made (a mount point, say) stays, empty as it was
    made.mkdir()
    _one_error_line(_in_process(capfd, "train", "cartpole", "--run-dir", str(made), *SMALL))
    assert made.is_dir() and list(made.iterdir()) == []


HOLD = """
import sys, time
from canter.runs.lock import RunLock
lock = RunLock(sys.argv[1]).acquire("canter train cartpole")
print("held", flush=True)
time.sleep(60)
"""


def test_a_run_directory_in_use_is_refused_with_the_holder(tmp_path):
    (tmp_path / "command.json").write_text(RunCommand(task="cartpole", flags=TrainFlags(num_envs=8)).to_json())
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        line = _one_error_line(_canter("train", "--resume", str(tmp_path)))
        assert f"run directory {tmp_path} is in use by process {holder.pid} (host " in line
        assert "canter train cartpole" in line
    finally:
        holder.kill()
        holder.wait()


def test_a_checkpoint_of_another_task_is_named_in_one_line(tmp_path):
    run_dir = tmp_path / "run"
    assert main(["train", "cartpole", "--run-dir", str(run_dir), *SMALL, "--max-iterations", "1"]) == 0
    payload = load_checkpoint(run_dir / "checkpoint.pt")
    ant = tmp_path / "ant"
    ant.mkdir()
    (ant / "command.json").write_text(RunCommand(task="ant", flags=TrainFlags(num_envs=8)).to_json())
    torch.save(payload, ant / "checkpoint.pt")
    with pytest.raises(CanterError, match=r"is for task cartpole \(obs 4, actions 1\), this run is task ant \(obs 41"):
        main(["eval", str(ant), "--episodes", "1", "--num-envs", "2"])
    payload["meta"]["task"] = "ant"  # same shapes, another task's name
    torch.save(payload, run_dir / "checkpoint.pt")
    with pytest.raises(CanterError, match=r"is for task ant \(obs 4, actions 1\), this run is task cartpole"):
        main(["eval", str(run_dir), "--episodes", "1", "--num-envs", "2"])


def test_mujoco_gl_without_its_library_breaks_only_video(tmp_path):
    gl = {"MUJOCO_GL": "osmesa"}  # this machine has no libOSMesa: `import mujoco` itself fails with it
    run_dir = tmp_path / "run"
    result = _canter("train", "cartpole", "--run-dir", str(run_dir), *SMALL, "--max-iterations", "1", env=gl)
    assert result.returncode == 0, result.stderr
    assert (run_dir / "checkpoint.pt").is_file()
    line = _one_error_line(_canter("play", str(run_dir), "--video", str(tmp_path / "v.mp4"), "--steps", "2", env=gl))
    assert "offscreen rendering is unavailable with MUJOCO_GL=osmesa" in line
    blocked = tmp_path / "file"
    blocked.write_text("")
    line = _one_error_line(_canter("play", str(run_dir), "--video", str(blocked / "v.mp4"), "--steps", "2"))
    assert f"cannot write {blocked / 'v.mp4'}" in line


def test_ranks_stopped_by_a_signal_are_an_interrupt_not_a_failure():
    class Failure:
        def __init__(self, exitcode: int):
            self.exitcode = exitcode

    assert interrupt_signal({0: Failure(130), 1: Failure(130)}) == signal.SIGINT
    assert interrupt_signal({0: Failure(143), 1: Failure(-15)}) == signal.SIGTERM
    assert interrupt_signal({0: Failure(143), 1: Failure(1)}) is None


@pytest.mark.skipif("stop_signal" not in inspect.getsource(OnPolicyRunner), reason="the runner does not stop on signals yet")
def test_sigterm_saves_and_prints_the_resume_command(tmp_path):
    run_dir = tmp_path / "run"
    process = subprocess.Popen([sys.executable, "-c", ENTRY, "train", "cartpole", "--run-dir", str(run_dir), *SMALL,
                                "--max-iterations", "100000"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not (run_dir / "progress.csv").exists() and not list(run_dir.glob("events.*")) and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(2.0)
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 128 + signal.SIGTERM
    iteration = load_checkpoint(run_dir / "checkpoint.pt")["iteration"]
    assert f"interrupted by SIGTERM at iteration {iteration}; checkpoint saved; resume with: canter train --resume {run_dir}" in stderr


def test_ranks_get_the_parsed_command_back_and_the_resume_line_is_exact(tmp_path):
    from canter.cli.train_cmd import TrainCmd
    from canter.cli.train_run import _rank_argv, resume_line

    cmd = TrainCmd(task="cartpole", num_envs=16, quiet=True, nproc=2, max_time=5.0)
    assert _rank_argv(cmd, ["--env.rewards.alive.weight", "2"]) == [
        "cartpole", "--num-envs", "16", "--max-time", "5.0", "--quiet", "--env.rewards.alive.weight", "2"]
    assert resume_line(tmp_path, signal.SIGTERM, 7) == (
        f"interrupted by SIGTERM at iteration 7; checkpoint saved; resume with: canter train --resume {tmp_path}")
    assert "before the first checkpoint" in resume_line(tmp_path, signal.SIGINT, None)
    # a run of two processes resumes only with two: its line says so (it said plain --resume, which is refused)
    assert resume_line(tmp_path, signal.SIGINT, 101, 2) == (
        f"interrupted by SIGINT at iteration 101; checkpoint saved; resume with: canter train --resume {tmp_path} --nproc 2")


class _ReaderGoneAt:
    """A stdout whose reader goes away (a closed pipe: `| head`, a pager that quit) when `marker`
    is written: that write and every later one raise BrokenPipeError."""

    def __init__(self, marker: str):
        self.marker, self.closed_pipe, self.text = marker, False, ""

    def write(self, text: str) -> int:
        if self.closed_pipe or self.marker in text:
            self.closed_pipe = True
            raise BrokenPipeError(32, "Broken pipe")
        self.text += text
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


def test_output_whose_reader_went_away_stops_the_run_as_sigpipe_keeping_its_progress(tmp_path, capfd, monkeypatch):
    """rich's own answer to a closed pipe is SystemExit(1): the iteration under way and all since the
    last checkpoint were lost. The run now stops as for a signal: the iteration's checkpoint, the
    resume line on stderr, exit 128 + SIGPIPE; the resume goes on from there."""
    from canter.rl import logger as logger_module

    silenced = []
    monkeypatch.setattr(logger_module, "silence_output", lambda *streams: silenced.append(streams))
    stdout = _ReaderGoneAt("it 1/")  # the first progress line: the reader is gone once training runs
    monkeypatch.setattr(sys, "stdout", stdout)
    run_dir = tmp_path / "run"
    result = _in_process(capfd, "train", "cartpole", "--run-dir", str(run_dir), "--num-envs", "8", "--max-iterations", "50")
    assert result.returncode == 128 + signal.SIGPIPE and stdout.closed_pipe and len(silenced) == 1
    assert "Active Reward Terms" in stdout.text  # what was printed before the reader went away
    # iteration 1's line went nowhere; its stop flag was gathered before that line, so the next
    # iteration is the one under way when the stop is seen (as for a signal arriving then)
    assert result.stderr.strip() == (f"interrupted by SIGPIPE at iteration 2; checkpoint saved; "
                                      f"resume with: canter train --resume {run_dir}")
    assert load_checkpoint(run_dir / "checkpoint.pt")["iteration"] == 2  # not the start: its progress is kept
    monkeypatch.undo()
    assert main(["train", "--resume", str(run_dir), "--max-iterations", "3", "--quiet"]) == 0
    assert load_checkpoint(run_dir / "checkpoint.pt")["iteration"] == 3


def test_a_rich_console_whose_reader_went_away_ends_the_command_quietly_as_sigpipe(capfd, monkeypatch):
    """rich's own answer to a closed pipe is exit 1 (SystemExit) at once, which said the command had failed
    (`canter list | head -1`, `canter eval RUN | head -1`, `canter bench ... | head`): every command
    now ends as SIGPIPE would end it, quietly (training's own answer, which keeps the run, is above)."""
    from rich.console import Console

    from canter.core import signals

    monkeypatch.setattr(Console, "on_broken_pipe", Console.on_broken_pipe)  # rich's own again after this test
    silenced = []
    monkeypatch.setattr(signals, "silence_output", lambda *streams: silenced.append(streams))
    stdout = _ReaderGoneAt("cartpole")  # the table of tasks
    monkeypatch.setattr(sys, "stdout", stdout)
    result = _in_process(capfd, "list")
    assert result.returncode == 128 + signal.SIGPIPE and stdout.closed_pipe and result.stderr == ""
    assert silenced == [(stdout, sys.stderr)]


def test_a_closed_pipe_outside_training_ends_quietly_with_128_plus_sigpipe(capfd, monkeypatch):
    from canter.cli import main as main_module

    def closed(argv):
        raise BrokenPipeError(32, "Broken pipe")

    from canter.core import signals

    silenced = []
    monkeypatch.setattr(main_module, "main", closed)
    monkeypatch.setattr(signals, "silence_output", lambda *streams: silenced.append(streams))
    result = _in_process(capfd, "list")
    assert result.returncode == 128 + signal.SIGPIPE and result.stderr == "" and result.stdout == ""
    assert silenced == [(sys.stdout, sys.stderr)]
