"""`canter bench gradsync`: ms per PPO minibatch step, flat all-reduce vs DistributedDataParallel."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from canter.cli.bench.output import emit, is_other_rank
from canter.cli.flags import Task
from canter.core.errors import CanterError


@dataclass(kw_only=True)
class GradsyncArgs:
    """Milliseconds per PPO minibatch step with the flat gradient all-reduce vs DistributedDataParallel vs
    no exchange. Train flags (--num-envs N in all, --agent.algo.num-mini-batches M, ...) shape the minibatch."""

    PASS_THROUGH: ClassVar[str] = "train"
    task: Task = "ant"
    nproc: int = 2  # processes (torch.distributed via torchrun's launcher)
    steps: int = 50  # minibatch steps per timed block
    repeats: int = 5  # timed blocks per way
    json: bool = False
    out: str | None = None  # write gradsync.json into this directory instead of printing anything

    def run(self, train_argv: list[str]) -> int:
        return gradsync_main(self, train_argv)


def gradsync_main(args: GradsyncArgs, train_argv: list[str]) -> int:
    from rich.console import Console
    from rich.table import Table

    from canter.bench.gradsync import run_gradsync_bench, run_gradsync_launched
    from canter.rl.distributed import launched_world_size

    if min(args.nproc, args.steps, args.repeats) < 1:
        raise CanterError("--nproc, --steps and --repeats must be >= 1")
    if args.nproc > 1 and launched_world_size() <= 1:
        result = run_gradsync_launched(args.task, args.steps, args.repeats, args.nproc, train_argv)
    else:
        result = run_gradsync_bench(args.task, args.steps, args.repeats, train_argv)
        if is_other_rank():
            return 0
    if emit(result.to_json(), args.out, "gradsync.json", args.json):
        return 0
    table = Table(title=f"gradient exchange, {args.task}: {result.nproc} processes, minibatch "
                  f"{result.minibatch_size_per_process} per process, {result.num_parameters:,} parameters",
                  title_justify="left")
    table.add_column("way")
    table.add_column("ms per minibatch step", justify="right")
    for label, ms in (("no exchange", result.none_ms), ("flat all-reduce", result.flat_ms),
                      ("DistributedDataParallel", result.ddp_ms)):
        table.add_row(label, f"{ms:.3f}")
    Console().print(table)
    print(f"faster: {result.faster}  commit {result.machine.get('commit')}")
    return 0
