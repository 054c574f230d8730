"""`canter bench latency`: single-observation policy inference latency, one thread."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from canter.cli.bench.output import write_report
from canter.cli.flags import Task
from canter.core.files import write_text_atomic


@dataclass(kw_only=True)
class LatencyArgs:
    """Single-observation policy inference latency, one thread: ONNX Runtime vs TorchScript vs torch."""

    task: Task = "dog-flat"  # whose observation/action sizes and agent network to use (a camera task's or an Atari game's CNN too)
    iterations: int = 5000  # timed calls per backend
    warmup: int = 200
    rounds: int = 5  # backends take turns in this many blocks
    gru_hidden_dim: int = 256
    out: str = "bench_out"  # writes latency.json, latency.md and latency.png into this directory
    json: bool = False

    def run(self, rest: list[str]) -> int:
        return latency_main(self)


def latency_main(args: LatencyArgs) -> int:
    from rich.console import Console
    from rich.table import Table

    from canter.bench.latency import LatencyCfg, markdown_table, plot_latency, run_latency_bench

    if Path(args.task).suffix in (".onnx", ".pt"):
        from canter.core.errors import CanterError

        raise CanterError(f"bench latency times fresh networks of a TASK's shape, not a file ({args.task}); an exported "
                          "file's own inference latency is in `canter deploy run FILE --unpaced`")
    cfg = LatencyCfg(task=args.task, iterations=args.iterations, warmup=args.warmup, rounds=args.rounds,
                     gru_hidden_dim=args.gru_hidden_dim)
    console = Console(stderr=True)
    result = run_latency_bench(cfg, progress=lambda m: console.print(f"[dim]{m}[/dim]"))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write_report(out / "latency.json", result.to_json())
    write_text_atomic(out / "latency.md", markdown_table(result))
    plot_latency(result, out / "latency.png")
    if args.json:
        print(json.dumps(result.to_json(), indent=2))
        return 0
    machine = result.machine
    table = Table(title=f"{args.task}: 1 observation, 1 thread, {args.iterations} calls per backend ({machine['cpu']})",
                  title_justify="left")
    for column in ("policy", "backend", "p50 µs", "p99 µs", "max µs"):
        table.add_column(column, justify="right" if "µs" in column else "left")
    for row in result.rows:
        table.add_row(row.policy, row.backend, f"{row.p50_us:.1f}", f"{row.p99_us:.1f}", f"{row.max_us:.0f}")
    Console().print(table)
    print(f"wrote {out / 'latency.json'}, latency.md, latency.png  commit {machine['commit']}")
    return 0
