"""Training logs: a rich progress line, TensorBoard scalars, a CSV of the curves and a PNG plot.

On a terminal the progress line redraws in place; when the output goes to a file or a pipe (nohup,
a batch job, CI), where rich would draw nothing until the end, a plain line is printed instead every
PLAIN_EVERY_S seconds (and for the first iteration), so a log shows how the run goes.

Rank 0 alone logs (see canter.rl.distributed); the others construct a Logger with enabled=False.
progress.csv and training_curve.png are rewritten (atomically: a temporary file renamed over the
old one) at every checkpoint and at close, so a killed run keeps them up to its last checkpoint.
A file that cannot be written (a full disk) is a WriteError naming it, TensorBoard's event file too.
"""

from __future__ import annotations

import contextlib
import csv
import math
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from canter.core.files import WriteError, atomic_write, is_write_failure, save_figure, write_failure
from canter.core.signals import silence_output

CURVE_KEYS = ("iteration", "wall_time_s", "env_steps", "mean_return", "mean_episode_length", "step_fps", "step_inference_fps",
              "total_fps", "nonfinite_resets", "learning_rate", "episodes", "recent_return", "recent_episode_length")
# the progress line's return and episode length: over the latest iterations that together ended at
# least this many episodes (rsl_rl and Stable-Baselines3 show the last 100 episodes), so that a task
# whose episodes outlast an iteration (a game of Pong: thousands of steps) shows a number, not nan
RECENT_EPISODES = 100
CURVE_FILES = ("progress.csv", "training_curve.png")
# non-finite resets above this share of all resets earn a warning line ...
NONFINITE_WARN_SHARE = 0.01
# ... and after one, the next comes this many iterations later at the soonest
WARN_EVERY = 10
# output that is not a terminal gets a plain progress line this often (seconds)
PLAIN_EVERY_S = 30.0


class Logger:
    def __init__(self, run_dir: Path, total_iterations: int, start_iteration: int, enabled: bool = True, console: Console | None = None,
                 plain_every_s: float = PLAIN_EVERY_S):
        self.run_dir = run_dir
        self.enabled = enabled
        self.console = console or Console()
        self.total_iterations = total_iterations
        # a terminal redraws the rich line; anything else gets a plain line every plain_every_s seconds
        self.plain_every_s = None if self.console.is_terminal else plain_every_s
        self._last_plain = -math.inf
        self._started = time.monotonic()
        self.history: list[dict[str, float]] = []
        self.output_closed = False  # the console's reader went away (a closed pipe): _output_went_away
        self.console.on_broken_pipe = self._output_went_away  # rich's hook (its default exits at once)
        self._writer: Any = None
        self._progress: Progress | None = None
        self._task: Any = None
        self._unstable = {"nonfinite": 0.0, "resets": 0.0, "since": -WARN_EVERY}
        self._sim_warnings: dict[str, int] = {}
        if not enabled:
            return
        from torch.utils.tensorboard import SummaryWriter

        _quiet_event_writer_threads()
        with self._tensorboard():
            self._writer = SummaryWriter(log_dir=str(run_dir))
        self._progress = Progress(
            TextColumn("[bold]it {task.completed}/{task.total}"),
            BarColumn(bar_width=20),
            TimeElapsedColumn(),
            TextColumn("eta"),
            TimeRemainingColumn(),
            TextColumn("{task.fields[status]}"),
            console=self.console,
            transient=False,
            disable=self.plain_every_s is not None,
        )
        self._task = self._progress.add_task("train", total=total_iterations, completed=start_iteration, status="")
        self._progress.start()

    def log_iteration(self, iteration: int, scalars: dict[str, float], curve: dict[str, float]) -> None:
        if not self.enabled:
            return
        with self._tensorboard():
            for key, value in scalars.items():
                if math.isfinite(value):
                    self._writer.add_scalar(key, value, iteration)
        mean_return = curve.get("recent_return", curve["mean_return"])
        length = curve.get("recent_episode_length", curve["mean_episode_length"])
        status = (  # before the first episode ends there is no return to show: '-', not nan
            (f"return {mean_return:8.3f}  len {length:6.1f}  " if math.isfinite(mean_return)
             else f"return {'-':>8}  len {'-':>6}  ") +
            f"step {curve['step_fps']:>9,.0f}/s  step+inf {curve['step_inference_fps']:>9,.0f}/s  "
            f"total {curve['total_fps']:>9,.0f}/s"
        )
        for key, value in scalars.items():  # where each curriculum stands (terrain level, goal range, ...)
            if key.startswith("Curriculum/") and math.isfinite(value):
                status += f"  {key.removeprefix('Curriculum/')} {value:.3g}"
        if curve.get("nonfinite_resets", 0.0) > 0:
            status += f"  [yellow]non-finite resets {curve['nonfinite_resets']:,.0f}[/yellow]"
        assert self._progress is not None
        self._progress.update(self._task, completed=iteration + 1, status=status)
        now = time.monotonic()
        if self.plain_every_s is not None and now - self._last_plain >= self.plain_every_s:
            self._last_plain = now
            minutes = (now - self._started) / 60.0
            self.console.print(f"it {iteration + 1}/{self.total_iterations}  {minutes:.1f} min  {status}", highlight=False,
                               soft_wrap=True)

    def warn(self, text: str) -> None:
        """One warning line above the progress bar (rank 0)."""
        if self.enabled:
            self.console.print(f"[yellow]warning:[/yellow] {text}")

    def _output_went_away(self) -> None:
        """The console's reader went away (a closed pipe: `| head`, a pager that quit, a killed `tee`).
        rich's own answer is SystemExit(1), which would drop the iteration under way and everything
        since the last checkpoint; instead the console goes quiet, stdout to /dev/null, and
        `output_closed` asks the run to stop, keeping its progress (the runners stop as for a signal,
        SIGPIPE: checkpoint, resume line, exit 128 + 13)."""
        self.console.quiet = True
        silence_output(sys.stdout, self.console.file)
        self.output_closed = True

    def note_instability(self, iteration: int, nonfinite_resets: float, resets: float, sim_warnings: dict[str, int]) -> None:
        """Counts of one iteration: envs reset because their physics blew up, all resets, and the
        simulator's warnings (message -> count). A warning line when the blown-up share exceeds
        NONFINITE_WARN_SHARE or the simulator warned; after one, the next comes WARN_EVERY iterations
        later at the soonest, with the counts of the iterations between."""
        unstable = self._unstable
        unstable["nonfinite"] += nonfinite_resets
        unstable["resets"] += resets
        for message, count in sim_warnings.items():
            self._sim_warnings[message] = self._sim_warnings.get(message, 0) + count
        if iteration - unstable["since"] < WARN_EVERY:
            return
        nonfinite, resets = unstable["nonfinite"], max(unstable["resets"], 1.0)
        parts = []
        if nonfinite > NONFINITE_WARN_SHARE * resets:
            parts.append(f"{nonfinite:,.0f} of {resets:,.0f} resets ({nonfinite / resets:.0%}) were envs whose physics "
                         f"blew up (non-finite or unstable state)")
        if self._sim_warnings:
            ranked = sorted(self._sim_warnings.items(), key=lambda item: -item[1])
            parts.append("MuJoCo warned " + "; ".join(f"{count:,} x {message!r}" for message, count in ranked))
        if parts:
            self.warn(f"iteration {iteration}: " + "; ".join(parts) + " (a smaller timestep may help)")
            unstable["since"] = iteration
        self._sim_warnings = {}
        unstable["nonfinite"] = unstable["resets"] = 0.0

    def checkpoint(self, history: list[dict[str, float]]) -> None:
        """A checkpoint was written: bring progress.csv, the plot and TensorBoard's files up to it."""
        self.history = history
        if not self.enabled:
            return
        with self._tensorboard():
            self._writer.flush()
        self.write_curves()

    def close(self, history: list[dict[str, float]]) -> None:
        """Stop the progress display and write the curves of the whole run (resumes included)."""
        self.history = history
        if not self.enabled:
            return
        assert self._progress is not None
        self._progress.stop()
        with self._tensorboard():
            self._writer.close()  # flushes first
        self.write_curves()

    @contextmanager
    def closed_after(self, history: Callable[[], list[dict[str, float]]]) -> Iterator[None]:
        """`with logger.closed_after(lambda: rows):` train; then close() with the rows. Where the block
        failed, its error is the one reported: a failed write while closing (the same full disk) stays
        quiet."""
        try:
            yield
        except BaseException:
            with contextlib.suppress(WriteError):
                self.close(history())
            raise
        self.close(history())

    @contextmanager
    def _tensorboard(self) -> Iterator[None]:
        """Calls of TensorBoard's writer: a failed write of its event file is a WriteError naming it."""
        try:
            yield
        except Exception as err:
            if not is_write_failure(err):
                raise
            writer = getattr(getattr(self._writer, "file_writer", None), "event_writer", None)
            path = Path(getattr(writer, "_file_name", self.run_dir / "events.out.tfevents.*"))
            raise WriteError(write_failure(path, err, what="TensorBoard events")) from err

    def write_curves(self) -> None:
        """progress.csv and training_curve.png over the whole history (resumed runs included)."""
        if not self.history:
            return
        with atomic_write(self.run_dir / "progress.csv") as tmp, open(tmp, "w", newline="") as file:
            writer = csv.DictWriter(file, fieldnames=CURVE_KEYS)
            writer.writeheader()
            for row in self.history:
                writer.writerow({k: row.get(k, float("nan")) for k in CURVE_KEYS})
        plot_curves(self.history, self.run_dir / "training_curve.png")


def mean_return_text(mean_return: float, over: str = "") -> str:
    """A done line's return, e.g. 'mean return 4.932 (last 100+ episodes)' (`over` in the brackets), or
    'no episode ended yet' where there is none to show (nan)."""
    if not math.isfinite(mean_return):
        return "no episode ended yet"
    return f"mean return {mean_return:.3f}" + (f" ({over})" if over else "")


def recent_means(history: list[dict[str, float]], min_episodes: int = RECENT_EPISODES) -> tuple[float, float]:
    """(mean return, mean episode length) over the episodes of the latest rows of `history` that
    together ended at least `min_episodes` episodes (every row, when fewer ended); nan when none ended.
    Rows without an episode count (checkpoints of older versions) are passed over."""
    returns = lengths = episodes = 0.0
    for row in reversed(history):
        count = row.get("episodes", 0.0)
        if not count > 0.0:  # none ended in it (or no count: nan)
            continue
        returns += row["mean_return"] * count
        lengths += row["mean_episode_length"] * count
        episodes += count
        if episodes >= min_episodes:
            break
    if episodes == 0.0:
        return math.nan, math.nan
    return returns / episodes, lengths / episodes


def _quiet_event_writer_threads() -> None:
    """TensorBoard writes its event file on a thread of its own; a failed write (a full disk) ends that
    thread with a traceback on stderr, then reaches the main thread at the writer's next call, where
    the Logger names the file in one line. This hook (installed once, chained to the one before)
    leaves out the thread's traceback for such write failures."""
    previous = threading.excepthook
    if getattr(previous, "canter_quiet_event_writer", False):
        return

    def hook(args: Any) -> None:
        if type(args.thread).__name__ == "_AsyncWriterThread" and args.exc_value is not None and is_write_failure(args.exc_value):
            return
        previous(args)

    hook.canter_quiet_event_writer = True  # type: ignore[attr-defined]
    threading.excepthook = hook


def plot_curves(history: list[dict[str, float]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    wall = [row["wall_time_s"] for row in history]
    steps = [row["env_steps"] for row in history]
    fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    recent = any("recent_return" in row for row in history)
    if recent:  # each iteration's episodes faint, the recent-episodes mean over them
        axes[0].plot(wall, [row["mean_return"] for row in history], ".", color="0.75", markersize=2, label="episodes ended in the iteration")
        axes[0].plot(wall, [row.get("recent_return", math.nan) for row in history],
                     label=f"last ≥ {RECENT_EPISODES} episodes")
        axes[0].legend()
    else:
        axes[0].plot(wall, [row["mean_return"] for row in history])
    axes[0].set(xlabel="wall time (s)", ylabel="mean episode return", title="return")
    axes[1].plot(steps, [row.get("recent_episode_length", row["mean_episode_length"]) for row in history])
    axes[1].set(xlabel="env steps", ylabel="mean episode length", title="episode length")
    for key in ("step_fps", "step_inference_fps", "total_fps"):
        axes[2].plot([row["iteration"] for row in history], [row[key] for row in history], label=key)
    axes[2].set(xlabel="iteration", ylabel="env steps / s", title="throughput")
    axes[2].legend()
    for ax in axes:
        ax.grid(alpha=0.3)
    save_figure(fig, path, dpi=100)
