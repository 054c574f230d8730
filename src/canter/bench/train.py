"""`canter bench train`: train for a fixed wall-time budget and report seed 003's three figures.

step FPS: env steps per second of env.step alone; step+inference FPS: including the policy's forward
pass; total FPS: including learning (the whole iteration). Medians over iterations after the first
(warm-up), with min and max.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from canter.bench.report import machine_info
from canter.cli.session import make_env, parse_train_args
from canter.core.errors import ConfigError
from canter.rl.runner import OnPolicyRunner

FIGURES = ("step_fps", "step_inference_fps", "total_fps", "iteration_time_s")


def run_train_bench(task: str, seconds: float, train_argv: list[str], progress: Any = None) -> dict[str, Any]:
    if not seconds > 0:
        raise ConfigError(f"--seconds: must be > 0, got {seconds}")
    args = parse_train_args(task, [*train_argv, "--quiet"])
    args.agent.max_iterations = 10**9
    env = make_env(args)
    with tempfile.TemporaryDirectory() as tmp:
        runner = OnPolicyRunner(env, args.agent, Path(tmp), seed=args.seed, cpu_physics=args.backend == "cpu")
        obs = env.reset()[0]
        runner.algorithm.train_mode()
        rows: list[dict[str, float]] = []
        start = time.perf_counter()
        while time.perf_counter() - start < seconds or len(rows) < 2:
            obs, stats = runner._iteration(obs, None)
            runner.iteration += 1
            rows.append(stats)
            if progress is not None:
                progress(time.perf_counter() - start, stats)
        wall = time.perf_counter() - start
    measured = rows[1:]
    result: dict[str, Any] = {
        "task": task,
        "num_envs": env.num_envs,
        "backend": args.backend,
        "device": str(env.device),
        "model_path": args.env.model_path,
        "algo": args.agent.algo.algo,
        "num_steps_per_env": args.agent.algo.num_steps_per_env,
        "iterations": len(rows),
        "wall_time_s": wall,
        "env_steps": len(rows) * env.num_envs * args.agent.algo.num_steps_per_env,
        "mean_return": rows[-1]["mean_return"],
    }
    for key in FIGURES:
        values = [row[key] for row in measured]
        result[key] = statistics.median(values)
        result[f"{key}_min"] = min(values)
        result[f"{key}_max"] = max(values)
    result.update(machine_info())
    return result
