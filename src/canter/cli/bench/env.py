"""`canter bench env` (env step FPS vs raw mujoco.batch.Batch) and `canter bench memory`."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

from canter.cli.flags import Task


@dataclass(kw_only=True)
class EnvArgs:
    """Env step FPS of a task vs raw mujoco.batch.Batch on the same model, threads and env count."""

    task: Task = "ant"
    num_envs: int = 1024
    backend: str = "cpu"
    device: str = "cpu"
    model: str | None = None  # a different MJCF for the task's robot
    threads: int = 0  # MuJoCo threads (0: all cores)
    seconds: float = 3.0  # measuring time per repetition and side
    repeats: int = 5
    seed: int = 0
    cuda_graph: bool = False  # the env step as one CUDA graph (warp backend on CUDA: env.cuda_graph)
    json: bool = False  # print JSON instead of a table
    out: str | None = None  # also write the result as DIR/env.json

    def run(self, rest: list[str]) -> int:
        return env_main(self)


def env_main(args: EnvArgs) -> int:
    from rich.console import Console
    from rich.table import Table

    from canter.bench.env import EnvBenchCfg, run_env_bench

    cfg = EnvBenchCfg(**{k: v for k, v in asdict(args).items() if k not in ("json", "out")})
    console = Console(stderr=True)

    def progress(rep: int, total: int, raw: float, env: float) -> None:
        console.print(f"[dim]repetition {rep}/{total}: raw {raw:,.0f} steps/s, env {env:,.0f} steps/s[/dim]")

    console.print(f"[bold]bench env[/bold] task={args.task} num_envs={args.num_envs} backend={args.backend} "
                  f"({args.repeats} x {args.seconds:.1f} s per side)")
    result = run_env_bench(cfg, progress=progress)
    if args.out is not None:
        from pathlib import Path

        from canter.cli.bench.output import write_report

        write_report(Path(args.out) / "env.json", result.to_json())
    if args.json:
        print(json.dumps(result.to_json(), indent=2))
        return 0
    table = Table(title=f"{result.task}: {result.num_envs} envs, {result.threads} threads, "
                  f"backend {result.backend}, decimation {result.decimation}", title_justify="left")
    for column in ("", "median steps/s", "min", "max"):
        table.add_column(column, justify="right")
    rows = [(f"raw {result.raw}", result.raw_rollout_steps_per_s, ",.0f"),
            ("canter env (all terms)", result.env_steps_per_s, ",.0f"),
            ("ratio env / raw", result.ratio, ".3f")]
    if result.raw_env_states_steps_per_s is not None and result.ratio_env_states is not None:
        rows += [(f"raw {result.raw} on the env's states", result.raw_env_states_steps_per_s, ",.0f"),
                 ("ratio env / raw on the env's states", result.ratio_env_states, ".3f")]
    for label, spread, fmt in rows:
        table.add_row(label, *(format(value, fmt) for value in (spread.median, spread.min, spread.max)))
    Console().print(table)
    if result.env_physics_share is not None:
        print(f"env physics share (time in sim.step / env step time): {result.env_physics_share:.3f}")
    if result.cuda_graph:
        print("env step as a CUDA graph: " + ("replayed" if result.cuda_graph_active else "not captured"))
    if result.gpu_memory_bytes is not None:
        print(f"GPU memory in use: {result.gpu_memory_bytes / 2**30:.2f} GiB ({result.machine['gpu']})")
    print(f"model: {result.model_path}  cpu: {result.machine['cpu']}  commit: {result.machine['commit']}")
    return 0


@dataclass(kw_only=True)
class MemoryArgs:
    """Bytes of per-env model fields with the usual randomized fields expanded."""

    task: Task = "ant"
    model: str | None = None
    num_envs: tuple[int, ...] = (256, 1024, 4096)
    json: bool = False

    def run(self, rest: list[str]) -> int:
        return memory_main(self)


def memory_main(args: MemoryArgs) -> int:
    from rich.console import Console
    from rich.table import Table

    from canter.bench.env import measure_dr_memory
    from canter.sim.model import load_model
    from canter.tasks import REGISTRY

    cfg = REGISTRY.get_mujoco(args.task, "bench env").env_cfg()
    model = load_model(args.model or cfg.model_path, cfg.spec_edits)
    results = [measure_dr_memory(model, n) for n in args.num_envs]
    if args.json:
        print(json.dumps([r.to_json() for r in results], indent=2))
        return 0
    table = Table(title=f"per-env model fields ({args.task})", title_justify="left")
    table.add_column("num_envs", justify="right")
    table.add_column("expanded bytes", justify="right")
    table.add_column("fields")
    for r in results:
        table.add_row(str(r.num_envs), f"{r.total_bytes:,}", ", ".join(r.expanded_fields))
    Console().print(table)
    return 0
