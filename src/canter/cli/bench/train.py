"""`canter bench train`: training FPS (step, step + inference, total) for a fixed wall time."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, ClassVar

import tyro

from canter.cli.bench.output import emit, is_other_rank, stopped_exit_code
from canter.cli.flags import Task
from canter.core.errors import CanterError

if TYPE_CHECKING:
    from rich.table import Table

    from canter.bench.report import Spread


@dataclass(kw_only=True)
class TrainBenchArgs:
    """Training FPS (step, step + inference, total; summed over --nproc processes) and iteration time.
    Any train flag (--num-envs N, --model MJCF, --backend, ...) and --env.* / --agent.* go to the run."""

    PASS_THROUGH: ClassVar[str] = "train"
    task: Task = "ant"
    max_time: Annotated[float, tyro.conf.arg(aliases=("--seconds",))] = 60.0  # seconds of training
    nproc: int = 1  # processes (torch.distributed via torchrun's launcher); --num-envs is the total
    cores_per_process: int | None = None  # threads of each process (default: cores / nproc)
    json: bool = False  # print JSON instead of a table
    out: str | None = None  # write train.json into this directory instead of printing anything
    profile_dir: str | None = None  # NVTX ranges (CUDA only) and a torch.profiler chrome trace per rank
    # raw mujoco.batch.Batch beside the training: after every K-th iteration, off the clock, on the states
    # that iteration stepped; reports total / raw per window of K iterations (0: off; cpu backend, one process)
    raw_every: int = 0

    def run(self, train_argv: list[str]) -> int:
        return train_bench_main(self, train_argv)


def train_bench_main(args: TrainBenchArgs, train_argv: list[str]) -> int:
    from rich.console import Console
    from rich.table import Table

    from canter.bench.train import run_train_bench, run_train_bench_launched
    from canter.rl.distributed import launched_world_size

    if args.nproc < 1:
        raise CanterError(f"--nproc: must be >= 1, got {args.nproc}")
    if args.cores_per_process is not None and args.cores_per_process < 1:
        raise CanterError(f"--cores-per-process: must be >= 1, got {args.cores_per_process}")
    console = Console(stderr=True)
    if args.nproc > 1:
        if args.raw_every:
            raise CanterError("--raw-every: one process only (raw Batch runs beside one rank's training)")
        if launched_world_size() > 1:
            raise CanterError("--nproc: this process is already one rank of a torchrun launch")
        console.print(f"[bold]bench train[/bold] task={args.task} for {args.max_time:.0f} s on {args.nproc} processes")
        result = run_train_bench_launched(args.task, args.max_time, train_argv, args.nproc, profile_dir=args.profile_dir,
                                          cores_per_process=args.cores_per_process)
    else:
        if args.out is None:
            console.print(f"[bold]bench train[/bold] task={args.task} for {args.max_time:.0f} s")

        def progress(elapsed: float, stats: dict) -> None:
            console.print(f"[dim]{elapsed:6.1f} s  return {stats['mean_return']:9.3f}  "
                          f"total {stats['total_fps']:>10,.0f} steps/s[/dim]")

        result = run_train_bench(args.task, args.max_time, train_argv, progress,
                                 Path(args.profile_dir) if args.profile_dir else None, raw_every=args.raw_every)
        if is_other_rank():
            return 0
    code = stopped_exit_code(result.stopped_by)
    if result.stopped_by is not None:  # the figures are kept: they cover the iterations done
        console.print(f"[yellow]stopped by {result.stopped_by} after {result.iterations} iterations "
                      f"({result.wall_time_s:.0f} s of the {args.max_time:.0f} s budget); the figures cover them[/yellow]")
    if emit(result.to_json(), args.out, "train.json", args.json):
        return code
    Console().print(_spread_table(
        f"train {args.task}: {result.num_envs} envs on {result.nproc} process(es), {result.iterations} iterations in "
        f"{result.wall_time_s:.0f} s",
        [("step_fps", result.step_fps, ",.0f"), ("step_inference_fps", result.step_inference_fps, ",.0f"),
         ("total_fps", result.total_fps, ",.0f"), ("iteration_time_s", result.iteration_time_s, ",.3f")]))
    if result.phase_seconds:
        phases = Table(title="where an iteration goes (median seconds per iteration; rank 0)", title_justify="left")
        for column in ("phase", "s / iteration", "share"):
            phases.add_column(column, justify="right" if column != "phase" else "left")
        total = sum(result.phase_seconds.values()) or 1.0
        for name, seconds in result.phase_seconds.items():
            phases.add_row(name, f"{seconds:.4f}", f"{seconds / total:.1%}")
        Console().print(phases)
        update = result.phase_seconds.get("update", 0.0)
        if result.minibatch_steps:
            print(f"update: {update / result.minibatch_steps * 1e3:.1f} ms per gradient step "
                  f"({result.minibatch_steps} per iteration)")
    if result.raw_env_states_fps is not None and result.total_over_raw is not None and result.physics_over_raw is not None:
        Console().print(_spread_table(
            f"raw mujoco.batch.Batch beside the training: {len(result.raw_windows)} windows of {result.raw_every} "
            f"iteration(s), raw on the states of each window's last",
            [("raw_env_states_fps", result.raw_env_states_fps, ",.0f"), ("total_over_raw", result.total_over_raw, ".3f"),
             ("physics_over_raw", result.physics_over_raw, ".3f")]))
    print(f"mean return at the end: {result.mean_return:.3f}  commit {result.machine.get('commit')}")
    return code


def _spread_table(title: str, figures: list[tuple[str, Spread, str]]) -> Table:
    """A table of figures (name, spread, format) with their median, min and max."""
    from rich.table import Table

    table = Table(title=title, title_justify="left")
    for column in ("figure", "median", "min", "max"):
        table.add_column(column, justify="right")
    for key, spread, fmt in figures:
        table.add_row(key, *(format(value, fmt) for value in (spread.median, spread.min, spread.max)))
    return table
