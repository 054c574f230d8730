"""`canter bench <scenario>`: benchmarks with a table for people and --json for scripts."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass

import tyro
from rich.console import Console
from rich.table import Table

from canter.bench.env import EnvBenchCfg, measure_dr_memory, run_env_bench
from canter.bench.train import run_train_bench
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


TRAIN_USAGE = """usage: canter bench train --task TASK [--seconds S] [--json] [train options: --num-envs N, --model MJCF, ...]"""


def _train(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(TRAIN_USAGE)
        return 0
    want_json = "--json" in argv
    argv = [a for a in argv if a != "--json"]
    task, seconds = _pop_flag(argv, "--task", "ant") or "ant", 60.0
    seconds_text = _pop_flag(argv, "--seconds", None)
    if seconds_text is not None:
        try:
            seconds = float(seconds_text)
        except ValueError as err:
            raise CanterError(f"--seconds: not a number: {seconds_text!r}") from err
    console = Console(stderr=True)
    console.print(f"[bold]bench train[/bold] task={task} for {seconds:.0f} s")

    def progress(elapsed: float, stats: dict) -> None:
        console.print(f"[dim]{elapsed:6.1f} s  return {stats['mean_return']:9.3f}  total {stats['total_fps']:>10,.0f} steps/s[/dim]")

    result = run_train_bench(task, seconds, argv, progress)
    if want_json:
        print(json.dumps(result, indent=2))
        return 0
    table = Table(title=f"train {task}: {result['num_envs']} envs, {result['iterations']} iterations in {result['wall_time_s']:.0f} s",
                  title_justify="left")
    for column in ("figure", "median", "min", "max"):
        table.add_column(column, justify="right")
    for key in ("step_fps", "step_inference_fps", "total_fps", "iteration_time_s"):
        table.add_row(key, f"{result[key]:,.3f}" if key.endswith("_s") else f"{result[key]:,.0f}",
                      f"{result[key + '_min']:,.3f}" if key.endswith("_s") else f"{result[key + '_min']:,.0f}",
                      f"{result[key + '_max']:,.3f}" if key.endswith("_s") else f"{result[key + '_max']:,.0f}")
    Console().print(table)
    print(f"mean return at the end: {result['mean_return']:.3f}  commit {result['commit']}")
    return 0


def _pop_flag(argv: list[str], flag: str, default: str | None) -> str | None:
    """Remove `flag VALUE` (or flag=VALUE) from argv and return VALUE."""
    for index, token in enumerate(argv):
        if token == flag:
            if index + 1 >= len(argv):
                raise CanterError(f"{flag} needs a value")
            value = argv[index + 1]
            del argv[index : index + 2]
            return value
        if token.startswith(flag + "="):
            del argv[index]
            return token.split("=", 1)[1]
    return default


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
    from pathlib import Path

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


SCENARIOS = {"env": _env, "memory": _memory, "train": _train, "sb3": _sb3}


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: canter bench {" + ",".join(SCENARIOS) + "} [options]", file=sys.stdout)
        return 0
    if argv[0] not in SCENARIOS:
        raise CanterError(f"unknown benchmark {argv[0]!r} (have: {', '.join(SCENARIOS)})")
    return SCENARIOS[argv[0]](argv[1:])
