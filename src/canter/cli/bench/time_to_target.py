"""`canter bench time-to-target TASK --metric NAME --target X [--minutes M]`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Literal

from canter.cli.bench.output import emit, stopped_exit_code
from canter.cli.flags import Task


@dataclass(kw_only=True)
class TimeToTargetArgs:
    """Train TASK and evaluate the deterministic policy at fixed marks of training wall time (a fresh env
    with a fixed seed each time); report when METRIC first reached TARGET, with a PNG of metric against
    time. Any train flag and --env.* / --agent.* go to the run."""

    PASS_THROUGH: ClassVar[str] = "train"
    task: Task = "cartpole"
    # an eval metric: mean_return, a task metric (lin_vel_x_abs_error, ...), ended_by_<term>; several joined by
    # commas must all reach the target (lin_vel_x_abs_error,lin_vel_y_abs_error)
    metric: str = "mean_return"
    target: float = 0.0  # the value the metric must reach (see --direction)
    minutes: float = 10.0  # training budget
    eval_every: float | None = None  # seconds of training between evaluations (default: minutes * 6, ten marks)
    episodes: int = 256  # per evaluation
    eval_envs: int = 256  # envs of the evaluation env
    direction: Literal["auto", "above", "below"] = "auto"  # auto: below for errors and failure endings
    stop_at_target: bool = False  # stop training at the first mark that reaches the target
    json: bool = False
    out: str | None = None  # write time_to_target.json and .png into this directory
    save_dir: str | None = None  # keep the trained run here (checkpoints at every mark) for canter play / eval

    def run(self, train_argv: list[str]) -> int:
        from rich.console import Console
        from rich.table import Table

        from canter.bench.time_to_target import plot_time_to_target, run_time_to_target

        console = Console(stderr=True)
        if not self.json:
            console.print(f"[bold]bench time-to-target[/bold] {self.task}: {self.metric} to {self.target:g} "
                          f"within {self.minutes:g} min of training")

        def progress(mark: dict, metric: str) -> None:
            values = "  ".join(f"{name} {mark[name]:.4f}" for name in metric.split(","))
            console.print(f"[dim]{mark['train_wall_s'] / 60:6.2f} min  {mark['env_steps']:>12,.0f} steps  "
                          f"{values}  return {mark['mean_return']:.3f}[/dim]")

        result = run_time_to_target(self.task, self.metric, self.target, self.minutes, train_argv,
                                    eval_every_s=self.eval_every, episodes=self.episodes, eval_envs=self.eval_envs,
                                    direction=self.direction, stop_at_target=self.stop_at_target,
                                    save_dir=self.save_dir, progress=progress)
        if self.out is not None:
            Path(self.out).mkdir(parents=True, exist_ok=True)
            plot_time_to_target(result, Path(self.out) / "time_to_target.png")
        stopped = stopped_exit_code(result.stopped_by)
        if result.stopped_by is not None:  # the marks so far are the result; the exit code says it was cut short
            console.print(f"stopped by {result.stopped_by}: {len(result.marks)} marks"
                          + (f", the run saved in {self.save_dir}" if self.save_dir else ""))
        if emit(result.to_json(), self.out, "time_to_target.json", self.json):
            return stopped
        table = Table(title=f"{result.task}: {result.metric} at each mark ({result.num_envs} envs; evaluation: "
                      f"{result.episodes} episodes, seed fixed)", title_justify="left")
        names = result.metric.split(",")
        for column in ("training min", "env steps", *names, "mean return"):
            table.add_column(column, justify="right")
        for mark in result.marks:
            table.add_row(f"{mark['train_wall_s'] / 60:.2f}", f"{mark['env_steps']:,.0f}",
                          *(f"{mark[name]:.4f}" for name in names), f"{mark['mean_return']:.3f}")
        Console().print(table)
        reached = "not reached" if result.time_to_target_s is None else f"{result.time_to_target_s / 60:.2f} min"
        print(f"time to {result.metric} {'<=' if result.direction == 'below' else '>='} {result.target:g}: {reached}"
              f"  (commit {result.machine.get('commit')})")
        return stopped
