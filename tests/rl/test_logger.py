"""The logger: instability warnings throttled to one line per WARN_EVERY iterations, curves written
at every checkpoint without leaving temporary files."""

from __future__ import annotations

import io

from rich.console import Console

from canter.rl.logger import WARN_EVERY, Logger


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
    assert lines[0].endswith(",nonfinite_resets,learning_rate") and len(lines) == 3
    assert lines[1].endswith(",3.0,0.001") and lines[2].endswith(",3.0,nan")
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
