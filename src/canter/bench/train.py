"""`canter bench train`: train for a fixed wall-time budget and report seed 003's three figures.

step FPS: env steps per second of env.step alone; step+inference FPS: including the policy's forward
pass; total FPS: including learning (the whole iteration). Medians over iterations after the first
(warm-up), with min and max. Under torch.distributed (`--nproc K`, or as a torchrun rank) every
figure is summed over the ranks at each iteration, `--num-envs` is the total over ranks, and the
iteration time is rank 0's (the ranks move in lock step).
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import torch

from canter.bench.report import machine_info
from canter.cli.launch import launch
from canter.cli.session import init_rank, make_rank_env, parse_train_args
from canter.core import profiling
from canter.core.errors import ConfigError
from canter.rl import distributed
from canter.rl.runner import OnPolicyRunner

FIGURES = ("step_fps", "step_inference_fps", "total_fps", "iteration_time_s")


def run_train_bench(
    task: str, seconds: float, train_argv: list[str], progress: Any = None, profile_dir: Path | None = None
) -> dict[str, Any]:
    """Trains `task` for `seconds` of wall time (at least two iterations) and returns the figures
    with the run's facts. profile_dir: mark the training phases (canter.core.profiling) and write a
    torch.profiler chrome trace of one extra iteration per rank there (trace_rank<r>.json)."""
    if not seconds > 0:
        raise ConfigError(f"--seconds: must be > 0, got {seconds}")
    args = parse_train_args(task, [*train_argv, "--quiet"])
    args.agent.max_iterations = 10**9
    info = init_rank(args)
    env = make_rank_env(args, info)
    if profile_dir is not None:
        profiling.enable()
    with tempfile.TemporaryDirectory() as tmp:
        runner = OnPolicyRunner(env, args.agent, Path(tmp), seed=args.seed, cpu_physics=args.backend == "cpu")
        obs = env.reset()[0]
        runner.algorithm.train_mode()
        rows: list[dict[str, float]] = []
        start = time.perf_counter()

        def time_is_up() -> bool:  # asked before the row is appended: at least two rows in all
            return time.perf_counter() - start >= seconds and len(rows) >= 1

        while not (rows and rows[-1]["stop"]):
            obs, stats = runner.run_iteration(obs, None, should_stop=time_is_up)
            runner.iteration += 1
            rows.append(stats)
            if progress is not None and info.is_main:
                progress(time.perf_counter() - start, stats)
        wall = time.perf_counter() - start
        if profile_dir is not None:
            trace = _profile_iteration(runner, obs, Path(profile_dir) / f"trace_rank{info.rank}.json")
    measured = rows[1:]
    sim_threads = getattr(getattr(env, "sim", None), "num_threads", None)
    result: dict[str, Any] = {
        "task": task,
        "nproc": info.world_size,
        "num_envs": env.num_envs * info.world_size,
        "num_envs_per_process": env.num_envs,
        "backend": args.backend,
        "device": str(env.device),
        "dist_backend": info.backend,
        "cores_per_process": distributed.cores_per_process(),
        "sim_threads_per_process": sim_threads,
        "rollout_torch_threads": runner.rollout_threads,
        "learn_torch_threads": runner.learn_threads,
        "model_path": args.env.model_path,
        "algo": args.agent.algo.algo,
        "num_steps_per_env": args.agent.algo.num_steps_per_env,
        "iterations": len(rows),
        "wall_time_s": wall,
        "env_steps": len(rows) * env.num_envs * info.world_size * args.agent.algo.num_steps_per_env,
        "mean_return": rows[-1]["mean_return"],
    }
    for key in FIGURES:
        values = [row[key] for row in measured]
        result[key] = statistics.median(values)
        result[f"{key}_min"] = min(values)
        result[f"{key}_max"] = max(values)
    if profile_dir is not None:
        result["profile_trace"] = str(trace)
    result.update(machine_info())
    return result


def run_train_bench_launched(
    task: str,
    seconds: float,
    train_argv: list[str],
    nproc: int,
    *,
    profile_dir: str | None = None,
    port: int | None = None,
    cores_per_process: int | None = None,
) -> dict[str, Any]:
    """run_train_bench on nproc ranks started by torchrun's launcher (`python -m canter bench train`
    in each; cores_per_process: see canter.cli.launch.launch); rank 0's result, with the port the
    ranks met on."""
    if not seconds > 0:
        raise ConfigError(f"--seconds: must be > 0, got {seconds}")
    parse_train_args(task, [*train_argv, "--quiet"])  # one-line errors here, before any rank starts
    with tempfile.TemporaryDirectory(prefix="canter-bench-") as tmp:
        out = Path(tmp) / "result.json"
        profile = ["--profile-dir", profile_dir] if profile_dir else []
        argv = [
            "bench",
            "train",
            "--task",
            task,
            "--seconds",
            str(seconds),
            "--out",
            str(out),
            *profile,
            *train_argv,
        ]
        port = launch("canter", argv, nproc, port=port, cores_per_process=cores_per_process)
        result = json.loads(out.read_text())
    result["master_port"] = port
    return result


def _profile_iteration(runner: OnPolicyRunner, obs: dict[str, torch.Tensor], path: Path) -> Path:
    """One more iteration under torch.profiler (CPU, plus CUDA when available); its chrome trace
    shows the physics / reward_observation / inference / update ranges."""
    from torch.profiler import ProfilerActivity, profile

    activities = [ProfilerActivity.CPU]
    if torch.cuda.is_available():
        activities.append(ProfilerActivity.CUDA)
    path.parent.mkdir(parents=True, exist_ok=True)
    with profile(activities=activities) as profiler:
        runner.run_iteration(obs, None)
        runner.iteration += 1
    profiler.export_chrome_trace(str(path))
    return path
