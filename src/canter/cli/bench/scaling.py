"""`canter bench scaling`: strong or weak scaling of training over processes (torch.distributed)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, ClassVar, Literal

import tyro

from canter.cli.flags import Task
from canter.core.errors import CanterError


@dataclass(kw_only=True)
class ScalingArgs:
    """Strong or weak scaling of training over processes: table, PNG, JSON, CPU/GPU utilization CSVs.
    Any other train flag (e.g. --backend, --agent.algo.num-mini-batches) goes to every training run."""

    PASS_THROUGH: ClassVar[str] = "train"
    task: Task = "ant"
    mode: Literal["strong", "weak"] = "weak"  # strong: --num-envs in all; weak: --num-envs per process
    nprocs: str = "1,2"  # process counts, comma-separated, e.g. 1,2,4,8
    num_envs: int = 1024
    max_time: Annotated[float, tyro.conf.arg(aliases=("--seconds",))] = 60.0  # seconds of training per point
    out: str = "bench_out/scaling"  # markdown table, PNG, JSON and CPU/GPU utilization CSVs go here
    profile: bool = False  # NVTX ranges (CUDA) and a torch.profiler chrome trace per rank
    sample_interval: float = 0.5  # seconds between CPU/GPU utilization samples
    cores_per_process: int = 0  # threads of each process (MuJoCo pool, learning); 0: cores / largest count
    json: bool = False  # print the JSON report instead of the table

    def run(self, train_argv: list[str]) -> int:
        return scaling_main(self, train_argv)


def command_line(args: ScalingArgs, train_argv: list[str]) -> str:
    """The command as a person would type it."""
    import shlex

    flags = [args.task, "--mode", args.mode, "--nprocs", args.nprocs, "--num-envs", str(args.num_envs),
             "--max-time", f"{args.max_time:g}"]
    return "canter bench scaling " + shlex.join([*flags, *train_argv])


def scaling_main(args: ScalingArgs, train_argv: list[str]) -> int:
    from rich.console import Console
    from rich.table import Table

    from canter.bench.scaling import parse_nprocs, run_scaling
    from canter.rl.distributed import launched_world_size

    if launched_world_size() > 1:
        raise CanterError("bench scaling starts its own ranks; run it outside torchrun")
    console = Console(stderr=True)
    report = run_scaling(task=args.task, mode=args.mode, nprocs=parse_nprocs(args.nprocs), num_envs=args.num_envs,
                         seconds=args.max_time, out=Path(args.out), profile=args.profile, train_argv=train_argv,
                         sample_interval=args.sample_interval, cores_per_process=args.cores_per_process,
                         command=command_line(args, train_argv),
                         log=lambda message: console.print(f"[dim]{message}[/dim]")).to_json()
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    table = Table(title=f"{args.mode} scaling, {args.task}", title_justify="left")
    for column in ("processes", "envs", "FPS step", "step+inference", "FPS total", "epoch (s)", "speedup", "efficiency"):
        table.add_column(column, justify="right")
    for p in report["points"]:
        table.add_row(str(p["nproc"]), str(p["num_envs"]), f"{p['step_fps']:,.0f}", f"{p['step_inference_fps']:,.0f}",
                      f"{p['total_fps']:,.0f}", f"{p['iteration_time_s']:.3f}", f"{p['speedup']:.2f}", f"{p['efficiency']:.0%}")
    Console().print(table)
    print("wrote " + ", ".join(report["files"].values()))
    return 0
