"""The logger: instability warnings throttled to one line per WARN_EVERY iterations, curves written
at every checkpoint without leaving temporary files."""

from __future__ import annotations

import io
import math
import re

import pytest
from rich.console import Console

from canter.rl.logger import WARN_EVERY, Logger, recent_means


def _logger(tmp_path) -> Logger:
    return Logger(tmp_path, 100, 0, console=Console(file=io.StringIO(), width=400))


def _lines(logger: Logger) -> list[str]:
    return [line for line in logger.console.file.getvalue().splitlines() if line.startswith("warning:")]  # type: ignore[attr-defined]


def test_blow_ups_above_one_percent_warn_once_per_window_with_the_window_counts(tmp_path):
    logger = _logger(tmp_path)
    for iteration in range(25):
        logger.note_instability(iteration, 5.0, 100.0, {"Nan in QACC at DOF N.": 2} if iteration == 3 else {})
    logger.close([])
    lines = _lines(logger)
    assert WARN_EVERY == 10 and len(lines) == 3  # iterations 0, 10, 20
    assert lines[0].startswith("warning: iteration 0: 5 of 100 resets (5%) were envs whose physics blew up")
    assert lines[1].startswith("warning: iteration 10: 50 of 1,000 resets (5%)")  # iterations 1-10
    assert "MuJoCo warned 2 x 'Nan in QACC at DOF N.'" in lines[1]
    assert "MuJoCo" not in lines[2]


def test_rare_blow_ups_do_not_warn(tmp_path):
    logger = _logger(tmp_path)
    for iteration in range(25):
        logger.note_instability(iteration, 1.0 if iteration % 5 == 0 else 0.0, 100.0, {})  # 0.2%
    logger.close([])
    assert _lines(logger) == []


def test_checkpoint_writes_the_curves_so_far_atomically(tmp_path):
    logger = _logger(tmp_path)
    row = {"iteration": 0.0, "wall_time_s": 1.0, "env_steps": 64.0, "mean_return": 1.0, "mean_episode_length": 2.0,
           "step_fps": 10.0, "step_inference_fps": 9.0, "total_fps": 8.0, "nonfinite_resets": 3.0}
    # the second row lacks the learning rate (a GA3C row): the column says nan
    logger.checkpoint([{**row, "learning_rate": 0.001}, {**row, "iteration": 1.0}])
    lines = (tmp_path / "progress.csv").read_text().splitlines()
    assert lines[0].endswith(",nonfinite_resets,learning_rate,episodes,recent_return,recent_episode_length") and len(lines) == 3
    assert lines[1].endswith(",3.0,0.001,nan,nan,nan") and lines[2].endswith(",3.0,nan,nan,nan,nan")
    assert (tmp_path / "training_curve.png").read_bytes()[:4] == b"\x89PNG"
    assert list(tmp_path.glob(".*.tmp")) == []
    logger.close([row, {**row, "iteration": 1.0}])


CURVE = {"mean_return": 1.5, "mean_episode_length": 20.0, "step_fps": 1000.0, "step_inference_fps": 900.0, "total_fps": 800.0}


def test_output_that_is_not_a_terminal_gets_plain_progress_lines_with_the_curricula(tmp_path):
    logger = Logger(tmp_path, 100, 0, console=Console(file=io.StringIO(), width=400), plain_every_s=0.0)
    for iteration in range(3):
        logger.log_iteration(iteration, {"Curriculum/terrain_levels": 0.25 * iteration, "Loss/kl": 0.01}, CURVE)
    logger.close([])
    lines = [line for line in logger.console.file.getvalue().splitlines() if line.startswith("it ")]  # type: ignore[attr-defined]
    assert [line.split("  ")[0] for line in lines] == ["it 1/100", "it 2/100", "it 3/100"]
    assert "return    1.500" in lines[0] and "total       800/s" in lines[0]
    assert lines[2].endswith("terrain_levels 0.5") and "kl" not in lines[2]


def test_plain_lines_come_at_most_every_interval_and_never_on_a_terminal(tmp_path):
    logger = Logger(tmp_path, 100, 0, console=Console(file=io.StringIO(), width=400))  # every 30 s
    for iteration in range(5):
        logger.log_iteration(iteration, {}, CURVE)
    logger.close([])
    assert sum(line.startswith("it ") for line in logger.console.file.getvalue().splitlines()) == 1  # type: ignore[attr-defined]
    terminal = Logger(tmp_path / "t", 100, 0, console=Console(file=io.StringIO(), width=400, force_terminal=True),
                      plain_every_s=0.0)
    assert terminal.plain_every_s is None
    for iteration in range(3):
        terminal.log_iteration(iteration, {}, CURVE)
    terminal.close([])
    assert "it 1/100  " not in terminal.console.file.getvalue()  # type: ignore[attr-defined]


def test_the_recent_mean_covers_the_latest_iterations_that_ended_100_episodes():
    """Hand-checked: the rows are walked back from the newest until >= 100 episodes; rows in which
    no episode ended (or with no count, from older checkpoints) count for nothing."""
    rows = [{"episodes": 80.0, "mean_return": 1.0, "mean_episode_length": 10.0},
            {"episodes": 60.0, "mean_return": 2.0, "mean_episode_length": 20.0},
            {"episodes": 0.0, "mean_return": math.nan, "mean_episode_length": math.nan},
            {"mean_return": 9.0, "mean_episode_length": 90.0},
            {"episodes": 50.0, "mean_return": 4.0, "mean_episode_length": 40.0}]
    # 50 episodes at 4, then 60 at 2: 110 >= 100, the 80 at 1 stay out
    assert recent_means(rows) == pytest.approx(((50 * 4 + 60 * 2) / 110, (50 * 40 + 60 * 20) / 110))
    assert recent_means(rows, min_episodes=200) == pytest.approx(((50 * 4 + 60 * 2 + 80) / 190, (2000 + 1200 + 800) / 190))
    assert recent_means(rows[2:4]) == (pytest.approx(math.nan, nan_ok=True), pytest.approx(math.nan, nan_ok=True))
    assert recent_means(rows[-1:]) == (4.0, 40.0)


def test_the_progress_line_shows_the_recent_mean_when_the_iteration_ended_no_episode(tmp_path):
    logger = Logger(tmp_path, 100, 0, console=Console(file=io.StringIO(), width=400), plain_every_s=0.0)
    logger.log_iteration(0, {}, {**CURVE, "mean_return": math.nan, "mean_episode_length": math.nan,
                                 "recent_return": -20.25, "recent_episode_length": 812.0})
    logger.close([])
    line = next(line for line in logger.console.file.getvalue().splitlines() if line.startswith("it "))  # type: ignore[attr-defined]
    assert "return  -20.250  len  812.0" in line and "nan" not in line


def test_before_any_episode_ended_the_progress_line_shows_a_dash_not_nan(tmp_path):
    logger = Logger(tmp_path, 100, 0, console=Console(file=io.StringIO(), width=400), plain_every_s=0.0)
    logger.log_iteration(0, {}, {**CURVE, "mean_return": math.nan, "mean_episode_length": math.nan,
                                 "recent_return": math.nan, "recent_episode_length": math.nan})
    logger.close([])
    line = next(line for line in logger.console.file.getvalue().splitlines() if line.startswith("it "))  # type: ignore[attr-defined]
    assert "return        -  len      -  step" in line and "nan" not in line


def test_a_tensorboard_event_file_that_cannot_be_written_is_named_in_one_error(tmp_path, monkeypatch):
    import errno

    from canter.core.files import WriteError

    logger = _logger(tmp_path)
    events = next(tmp_path.glob("events.out.tfevents.*"))

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(logger._writer, "add_scalar", full)
    with pytest.raises(WriteError, match=rf"^cannot write TensorBoard events {re.escape(str(events))}: disk full \([0-9,]+ free\)$"):
        logger.log_iteration(0, {"Loss/kl": 0.01}, CURVE)
    monkeypatch.setattr(logger._writer, "flush", full)
    with pytest.raises(WriteError, match=r"^cannot write TensorBoard events "):
        logger.checkpoint([])
    monkeypatch.undo()
    logger.close([])


def test_the_event_writer_threads_failed_write_leaves_no_traceback_other_threads_keep_theirs(monkeypatch):
    """TensorBoard's writer thread dies on a full disk with a traceback; the main thread names the file
    at the writer's next call, so the Logger's hook leaves that traceback out, and only that one."""
    import errno
    import threading
    from types import SimpleNamespace

    from canter.rl import logger as logger_module

    reported = []
    monkeypatch.setattr(threading, "excepthook", reported.append)
    logger_module._quiet_event_writer_threads()
    logger_module._quiet_event_writer_threads()  # once: a second call chains nothing more
    hook = threading.excepthook

    class _AsyncWriterThread(threading.Thread):  # the name of TensorBoard's writer thread
        pass

    full = OSError(errno.ENOSPC, "No space left on device")
    cases = [SimpleNamespace(thread=_AsyncWriterThread(), exc_value=full),
             SimpleNamespace(thread=threading.Thread(), exc_value=full),
             SimpleNamespace(thread=_AsyncWriterThread(), exc_value=ValueError("a bug"))]
    for args in cases:
        hook(args)  # pyright: ignore[reportArgumentType]  (the fields the hook reads)
    assert reported == cases[1:]


def test_closed_after_closes_with_the_rows_and_a_failed_close_does_not_hide_the_blocks_error(tmp_path, monkeypatch):
    from canter.core.files import WriteError
    from canter.rl import logger as logger_module

    row = {"iteration": 0.0, "wall_time_s": 1.0, "env_steps": 64.0, **CURVE}
    logger = _logger(tmp_path)
    with logger.closed_after(lambda: [row]):
        pass
    assert len((tmp_path / "progress.csv").read_text().splitlines()) == 2

    def no_room(fig, path, dpi):
        raise WriteError(f"cannot write {path}: disk full (0 free)")

    monkeypatch.setattr(logger_module, "save_figure", no_room)
    logger = _logger(tmp_path)
    with pytest.raises(WriteError, match=r"^cannot write checkpoint x: disk full$"), logger.closed_after(lambda: [row]):
        raise WriteError("cannot write checkpoint x: disk full")  # the close fails too: the block's error stays
    with pytest.raises(WriteError, match=r"training_curve\.png: disk full \(0 free\)$"), _logger(tmp_path).closed_after(lambda: [row]):
        pass  # a close that fails on its own is reported
