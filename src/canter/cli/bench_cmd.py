"""`canter bench <scenario>`: benchmarks with a table for people and --json for scripts."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass

import tyro
from rich.console import Console
from rich.table import Table

from canter.bench.env import EnvBenchCfg, measure_dr_memory, run_env_bench
from canter.core.errors import CanterError
from canter.sim.model import load_model
from canter.tasks import REGISTRY


@dataclass(kw_only=True)
class EnvBenchArgs(EnvBenchCfg):
    json: bool = False  # print JSON instead of a table


@dataclass(kw_only=True)
class MemoryArgs:
    task: str = "ant"
    model: str | None = None
    num_envs: tuple[int, ...] = (256, 1024, 4096)
    json: bool = False


def _env(argv: list[str]) -> int:
    args = tyro.cli(
        EnvBenchArgs,
        args=argv,
        prog="canter bench env",
        description="Env step FPS of a task vs raw mujoco.batch.Batch on the same model.",
    )
    console = Console(stderr=True)

    def progress(rep: int, total: int, raw: float, env: float) -> None:
        console.print(f"[dim]repetition {rep}/{total}: raw {raw:,.0f} steps/s, env {env:,.0f} steps/s[/dim]")

    console.print(
        f"[bold]bench env[/bold] task={args.task} num_envs={args.num_envs} backend={args.backend} "
        f"({args.repeats} x {args.seconds:.1f} s per side)"
    )
    result = run_env_bench(args, progress=progress)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    table = Table(
        title=f"{result['task']}: {result['num_envs']} envs, {result['threads']} threads, "
        f"backend {result['backend']}, decimation {result['decimation']}",
        title_justify="left",
    )
    for column in ("", "median steps/s", "min", "max"):
        table.add_column(column, justify="right")
    table.add_row(
        "raw mujoco.batch.Batch",
        f"{result['raw_rollout_steps_per_s']:,.0f}",
        f"{result['raw_rollout_steps_per_s_min']:,.0f}",
        f"{result['raw_rollout_steps_per_s_max']:,.0f}",
    )
    table.add_row(
        "canter env (all terms)",
        f"{result['env_steps_per_s']:,.0f}",
        f"{result['env_steps_per_s_min']:,.0f}",
        f"{result['env_steps_per_s_max']:,.0f}",
    )
    table.add_row(
        "ratio env / raw",
        f"{result['ratio']:.3f}",
        f"{result['ratio_min']:.3f}",
        f"{result['ratio_max']:.3f}",
    )
    Console().print(table)
    print(f"model: {result['model_path']}  cpu: {result['cpu']}  commit: {result['commit']}")
    return 0


def _memory(argv: list[str]) -> int:
    args = tyro.cli(
        MemoryArgs,
        args=argv,
        prog="canter bench memory",
        description="Bytes of per-env model fields with the usual randomized fields expanded.",
    )
    cfg = REGISTRY.get(args.task).env_cfg()
    model = load_model(args.model or cfg.model_path, cfg.spec_edits)
    results = [measure_dr_memory(model, n) for n in args.num_envs]
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    table = Table(title=f"per-env model fields ({args.task})", title_justify="left")
    table.add_column("num_envs", justify="right")
    table.add_column("expanded bytes", justify="right")
    table.add_column("fields")
    for r in results:
        table.add_row(str(r["num_envs"]), f"{r['total_bytes']:,}", ", ".join(r["expanded_fields"]))
    Console().print(table)
    return 0


SCENARIOS = {"env": _env, "memory": _memory}


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: canter bench {" + ",".join(SCENARIOS) + "} [options]", file=sys.stdout)
        return 0
    if argv[0] not in SCENARIOS:
        raise CanterError(f"unknown benchmark {argv[0]!r} (have: {', '.join(SCENARIOS)})")
    return SCENARIOS[argv[0]](argv[1:])
