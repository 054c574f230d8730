"""`canter bench <scenario>`: benchmarks with a table for people and --json for scripts."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import tyro
from rich.console import Console
from rich.table import Table

from canter.bench.env import EnvBenchCfg, measure_dr_memory, run_env_bench
from canter.bench.train import run_train_bench, run_train_bench_launched
from canter.cli.session import pop_flag
from canter.core.errors import CanterError
from canter.rl.distributed import info as distributed_info
from canter.rl.distributed import launched_world_size, shutdown
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
    if result["env_physics_share"] is not None:
        print(f"env physics share (time in sim.step / env step time): {result['env_physics_share']:.3f}")
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


TRAIN_USAGE = """usage: canter bench train --task TASK [--seconds S] [--nproc K [--cores-per-process C]] [--json]
                          [--out FILE] [--profile-dir DIR] [train options: --num-envs N, --model MJCF, ...]
--nproc K: K processes (torch.distributed via torchrun's launcher); --num-envs is the total over them and
every FPS figure is summed over them. --out FILE: write the JSON there instead of printing anything. --profile-dir DIR: NVTX ranges (CUDA only) and a torch.profiler chrome trace per rank."""


def _train(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(TRAIN_USAGE)
        return 0
    argv = list(argv)
    want_json = "--json" in argv
    argv = [a for a in argv if a != "--json"]
    task = pop_flag(argv, "--task", "ant") or "ant"
    seconds = _number("--seconds", pop_flag(argv, "--seconds", "60"))
    nproc = int(_number("--nproc", pop_flag(argv, "--nproc", "1")))
    out = pop_flag(argv, "--out", None)
    profile_dir = pop_flag(argv, "--profile-dir", None)
    cores = pop_flag(argv, "--cores-per-process", None)
    if nproc < 1:
        raise CanterError(f"--nproc: must be >= 1, got {nproc}")
    console = Console(stderr=True)
    if nproc > 1:
        if launched_world_size() > 1:
            raise CanterError("--nproc: this process is already one rank of a torchrun launch")
        console.print(f"[bold]bench train[/bold] task={task} for {seconds:.0f} s on {nproc} processes")
        result = run_train_bench_launched(task, seconds, argv, nproc, profile_dir=profile_dir,
                                          cores_per_process=int(_number("--cores-per-process", cores)) if cores else None)
    else:
        if out is None:
            console.print(f"[bold]bench train[/bold] task={task} for {seconds:.0f} s")

        def progress(elapsed: float, stats: dict) -> None:
            console.print(f"[dim]{elapsed:6.1f} s  return {stats['mean_return']:9.3f}  total {stats['total_fps']:>10,.0f} steps/s[/dim]")

        result = run_train_bench(task, seconds, argv, progress, Path(profile_dir) if profile_dir else None)
        is_main = distributed_info().is_main
        shutdown()
        if not is_main:
            return 0
    if out is not None:
        Path(out).write_text(json.dumps(result, indent=2))
        return 0
    if want_json:
        print(json.dumps(result, indent=2))
        return 0
    table = Table(title=f"train {task}: {result['num_envs']} envs on {result['nproc']} process(es), "
                  f"{result['iterations']} iterations in {result['wall_time_s']:.0f} s", title_justify="left")
    for column in ("figure", "median", "min", "max"):
        table.add_column(column, justify="right")
    for key in ("step_fps", "step_inference_fps", "total_fps", "iteration_time_s"):
        table.add_row(key, f"{result[key]:,.3f}" if key.endswith("_s") else f"{result[key]:,.0f}",
                      f"{result[key + '_min']:,.3f}" if key.endswith("_s") else f"{result[key + '_min']:,.0f}",
                      f"{result[key + '_max']:,.3f}" if key.endswith("_s") else f"{result[key + '_max']:,.0f}")
    Console().print(table)
    print(f"mean return at the end: {result['mean_return']:.3f}  commit {result['commit']}")
    return 0


def _number(flag: str, text: str | None) -> float:
    try:
        return float(text or "")
    except ValueError as err:
        raise CanterError(f"{flag}: not a number: {text!r}") from err


@dataclass(kw_only=True)
class Sb3Args:
    minutes: float = 3.0  # training wall time of each side
    canter_envs: int = 256  # the ant-classic task's default
    sb3_envs: int = 8
    seed: int = 0
    eval_episodes: int = 16
    out: str = "bench_out"  # writes sb3_<minutes>min.json and .png here
    json: bool = False


def _sb3(argv: list[str]) -> int:
    from canter.bench.sb3 import plot_compare, run_sb3_compare

    args = tyro.cli(Sb3Args, args=argv, prog="canter bench sb3",
                    description="Canter vs Gymnasium Ant-v5 + Stable-Baselines3 PPO at equal wall time.")
    console = Console(stderr=True)
    result = run_sb3_compare(args.minutes, args.canter_envs, args.sb3_envs, args.seed, args.eval_episodes,
                             log=lambda m: console.print(f"[dim]{m}[/dim]"))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stem = out / f"sb3_{args.minutes:g}min"
    stem.with_suffix(".json").write_text(json.dumps(result, indent=2))
    plot_compare(result, stem.with_suffix(".png"))
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    machine = result["machine"]
    table = Table(title=f"Ant, {args.minutes:g} min each, {machine['cpu']} ({machine['cores']} cores)", title_justify="left")
    for column in ("", "frames/s", "eval return (mean ± std)"):
        table.add_column(column, justify="right")
    table.add_row("raw mujoco.batch.Batch", f"{result['raw_batch_steps_per_s']:,.0f}", "-")
    for key, label in (("canter", f"Canter PPO, {args.canter_envs} envs"), ("sb3", f"SB3 PPO, {args.sb3_envs} envs")):
        r = result[key]
        table.add_row(label, f"{r['frames_per_s']:,.0f}", f"{r['eval_mean_return']:.1f} ± {r['eval_std_return']:.1f}")
    Console().print(table)
    print(f"Canter/SB3 frames: {result['speedup_frames']:.1f}x; Canter/raw: {result['canter_fraction_of_raw']:.2f}; "
          f"wrote {stem}.json and {stem}.png")
    return 0


@dataclass(kw_only=True)
class ScalingArgs:
    task: str = "ant"
    mode: Literal["strong", "weak"] = "weak"  # strong: --num-envs in all; weak: --num-envs per process
    nprocs: str = "1,2"  # process counts, comma-separated, e.g. 1,2,4,8
    num_envs: int = 1024
    seconds: float = 60.0  # timed training per point (plus start-up)
    out: str = "bench_out/scaling"  # markdown table, PNG, JSON and CPU/GPU utilization CSVs go here
    profile: bool = False  # NVTX ranges (CUDA) and a torch.profiler chrome trace per rank
    sample_interval: float = 0.5  # seconds between CPU/GPU utilization samples
    cores_per_process: int = 0  # threads of each process (MuJoCo pool, learning); 0: cores / largest count
    json: bool = False  # print the JSON report instead of the table


def _scaling(argv: list[str]) -> int:
    from canter.bench.scaling import command_line, parse_nprocs, run_scaling

    args, train_argv = tyro.cli(
        ScalingArgs, args=argv, prog="canter bench scaling", return_unknown_args=True,
        description="Strong or weak scaling of training over processes (torch.distributed); any other flag "
        "(e.g. --backend, --agent.algo.num-mini-batches) goes to every training run.",
    )
    if launched_world_size() > 1:
        raise CanterError("bench scaling starts its own ranks; run it outside torchrun")
    console = Console(stderr=True)
    report = run_scaling(task=args.task, mode=args.mode, nprocs=parse_nprocs(args.nprocs), num_envs=args.num_envs,
                         seconds=args.seconds, out=Path(args.out), profile=args.profile, train_argv=train_argv,
                         sample_interval=args.sample_interval, cores_per_process=args.cores_per_process,
                         command=command_line(argv),
                         log=lambda message: console.print(f"[dim]{message}[/dim]"))
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


GRADSYNC_USAGE = """usage: canter bench gradsync --task TASK [--nproc K] [--steps N] [--repeats R] [--json] [--out FILE]
                             [train options: --num-envs N (total), --agent.algo.num-mini-batches M, ...]
Milliseconds per PPO minibatch step with the flat gradient all-reduce vs DistributedDataParallel vs no exchange."""


def _gradsync(argv: list[str]) -> int:
    from canter.bench.gradsync import run_gradsync_bench, run_gradsync_launched

    if not argv or argv[0] in ("-h", "--help"):
        print(GRADSYNC_USAGE)
        return 0
    argv = list(argv)
    want_json = "--json" in argv
    argv = [a for a in argv if a != "--json"]
    task = pop_flag(argv, "--task", "ant") or "ant"
    nproc = int(_number("--nproc", pop_flag(argv, "--nproc", "2")))
    steps = int(_number("--steps", pop_flag(argv, "--steps", "50")))
    repeats = int(_number("--repeats", pop_flag(argv, "--repeats", "5")))
    out = pop_flag(argv, "--out", None)
    if min(nproc, steps, repeats) < 1:
        raise CanterError("--nproc, --steps and --repeats must be >= 1")
    if nproc > 1 and launched_world_size() <= 1:
        result = run_gradsync_launched(task, steps, repeats, nproc, argv)
    else:
        result = run_gradsync_bench(task, steps, repeats, argv)
        is_main = distributed_info().is_main
        shutdown()
        if not is_main:
            return 0
    if out is not None:
        Path(out).write_text(json.dumps(result, indent=2))
        return 0
    if want_json:
        print(json.dumps(result, indent=2))
        return 0
    table = Table(title=f"gradient exchange, {task}: {result['nproc']} processes, minibatch "
                  f"{result['minibatch_size_per_process']} per process, {result['num_parameters']:,} parameters",
                  title_justify="left")
    table.add_column("way")
    table.add_column("ms per minibatch step", justify="right")
    for way, label in (("none", "no exchange"), ("flat", "flat all-reduce"), ("ddp", "DistributedDataParallel")):
        table.add_row(label, f"{result[way + '_ms']:.3f}")
    Console().print(table)
    print(f"faster: {result['faster']}  commit {result['commit']}")
    return 0


def _stones(argv: list[str]) -> int:
    from canter.cli.stones_cmd import stones_main

    return stones_main(argv)


def _stones_cost(argv: list[str]) -> int:
    from canter.cli.stones_cmd import stones_cost_main

    return stones_cost_main(argv)


@dataclass(kw_only=True)
class QpArgs:
    batch: int = 4096
    dtype: str = "float64"  # Canter's dtype (float64 or float32); the baselines are float64
    method: str = "ipm"  # Canter's method: ipm (interior point) or admm
    iterations: int = 0  # Canter's fixed budget; 0 = the smallest that reaches target_kkt
    target_kkt: float = 1e-5  # every solver is tuned to reach this max KKT residual
    repeats: int = 3
    threads: int = 0  # torch and proxsuite threads; 0 = all cores
    seed: int = 0
    out: str = ""  # if set, write qp_<batch>.json and .png here
    json: bool = False


def _qp(argv: list[str]) -> int:
    from dataclasses import asdict
    from pathlib import Path

    from canter.bench.qp import QpBenchCfg, plot_qp, run_qp_bench

    args = tyro.cli(QpArgs, args=argv, prog="canter bench qp",
                    description="Batched GRF QPs: Canter's solver vs OSQP in a loop vs proxsuite's BatchQP, equal accuracy.")
    console = Console(stderr=True)
    cfg = QpBenchCfg(**{k: v for k, v in asdict(args).items() if k not in ("out", "json")})
    result = run_qp_bench(cfg, log=lambda m: console.print(f"[dim]{m}[/dim]"))
    if args.out:
        stem = Path(args.out) / f"qp_{args.batch}"
        stem.parent.mkdir(parents=True, exist_ok=True)
        stem.with_suffix(".json").write_text(json.dumps(result, indent=2))
        plot_qp(result, stem.with_suffix(".png"))
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    machine = result["machine"]
    table = Table(title=f"GRF QP, batch {args.batch}, Canter {result['method']} in {result['dtype']}, {result['iterations']} iterations, "
                  f"{machine['cpu']} ({result['threads']} threads)", title_justify="left")
    for column in ("solver", "problems/s (median)", "min", "max", "problems/CPU-s", "max KKT residual", "setting"):
        table.add_column(column, justify="right")
    rows = ((f"Canter qp.solve ({result['canter_kernel']})", "canter", "", "canter", f"{result['iterations']} iterations"),
            ("Canter qp.solve (torch ops)", "canter_torch", "canter_torch_", "canter_torch", f"{result['iterations']} iterations"),
            ("OSQP, Python loop", "osqp_loop", "osqp_", "osqp", f"eps_abs {result['osqp_eps_abs']:g}"),
            ("proxsuite BatchQP, solve", "proxsuite_batch", "proxsuite_", "proxsuite", f"eps_abs {result['proxsuite_eps_abs']:g}"),
            ("proxsuite BatchQP, init + solve", "proxsuite_batch_with_setup", "proxsuite_", "proxsuite",
             f"eps_abs {result['proxsuite_eps_abs']:g}"))
    for label, key, kkt_prefix, solver, setting in rows:
        kkt = f"{result[kkt_prefix + 'max_kkt_residual']:.1e}"
        if result[f"{solver}_above_target"]:
            kkt += f" ({result[f'{solver}_above_target']} above target)"
        table.add_row(label, f"{result[key + '_problems_per_s']:,.0f}", f"{result[key + '_problems_per_s_min']:,.0f}",
                      f"{result[key + '_problems_per_s_max']:,.0f}", f"{result[key + '_problems_per_cpu_s']:,.0f}",
                      kkt, setting)
    Console().print(table)
    print(f"Canter / OSQP loop: {result['speedup_vs_osqp_loop']:.1f}x; Canter / proxsuite batch: "
          f"{result['speedup_vs_proxsuite_batch']:.2f}x; commit {result['commit']}")
    return 0


@dataclass(kw_only=True)
class LatencyArgs:
    task: str = "dog-flat"  # whose observation/action sizes and agent network to use
    iterations: int = 5000  # timed calls per backend
    warmup: int = 200
    rounds: int = 5  # backends take turns in this many blocks
    gru_hidden_dim: int = 256
    out: str = "bench_out"  # writes latency.json, latency.md and latency.png here
    json: bool = False


def _latency(argv: list[str]) -> int:
    from pathlib import Path

    from canter.bench.latency import LatencyCfg, markdown_table, plot_latency, run_latency_bench

    args = tyro.cli(LatencyArgs, args=argv, prog="canter bench latency",
                    description="Single-observation policy inference latency, one thread: ONNX Runtime vs TorchScript vs torch.")
    cfg = LatencyCfg(task=args.task, iterations=args.iterations, warmup=args.warmup, rounds=args.rounds,
                     gru_hidden_dim=args.gru_hidden_dim)
    console = Console(stderr=True)
    result = run_latency_bench(cfg, progress=lambda m: console.print(f"[dim]{m}[/dim]"))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "latency.json").write_text(json.dumps(result, indent=2))
    (out / "latency.md").write_text(markdown_table(result))
    plot_latency(result, out / "latency.png")
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    machine = result["machine"]
    table = Table(title=f"{args.task}: 1 observation, 1 thread, {args.iterations} calls per backend ({machine['cpu']})",
                  title_justify="left")
    for column in ("policy", "backend", "p50 µs", "p99 µs", "max µs"):
        table.add_column(column, justify="right" if "µs" in column else "left")
    for row in result["rows"]:
        table.add_row(row["policy"], row["backend"], f"{row['p50_us']:.1f}", f"{row['p99_us']:.1f}", f"{row['max_us']:.0f}")
    Console().print(table)
    print(f"wrote {out / 'latency.json'}, latency.md, latency.png  commit {machine['commit']}")
    return 0


SCENARIOS = {
    "env": _env,
    "memory": _memory,
    "train": _train,
    "sb3": _sb3,
    "scaling": _scaling,
    "gradsync": _gradsync,
    "qp": _qp,
    "stones": _stones,
    "stones-cost": _stones_cost,
    "latency": _latency,
}


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: canter bench {" + ",".join(SCENARIOS) + "} [options]", file=sys.stdout)
        return 0
    if argv[0] not in SCENARIOS:
        raise CanterError(f"unknown benchmark {argv[0]!r} (have: {', '.join(SCENARIOS)})")
    return SCENARIOS[argv[0]](argv[1:])
