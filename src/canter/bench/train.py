"""`canter bench train`: train for a fixed wall-time budget and report seed 003's three figures.

step FPS: env steps per second of env.step alone; step+inference FPS: including the policy's forward
pass; total FPS: including learning (the whole iteration). Medians over iterations after the first
(warm-up), with min and max. Under torch.distributed (`--nproc K`, or as a torchrun rank) every
figure is summed over the ranks at each iteration, `--num-envs` is the total over ranks, and the
iteration time is rank 0's (the ranks move in lock step).

`--raw-every K` (cpu backend, one process) measures raw `mujoco.batch.Batch` beside the training, so
that a VM whose speed drifts by tens of percent within minutes still gives a true ratio: after every
K-th iteration, with the training clock stopped, the env's own Batch steps again, raw (a row copy
and Batch.step, nothing else), the integration states that iteration's physics stepped, in order,
and the env's state is put back (training goes on bitwise as without). Each window of K iterations
gives total FPS / raw FPS of the states its last iteration simulated; the report has the median
(and min-max) of those ratios, of raw FPS, and of the physics phase / raw over the same states
(above 1: the physics runs slower inside training than alone).
"""

from __future__ import annotations

import contextlib
import json
import signal
import statistics
import tempfile
import time
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import torch

from canter.bench.env import StateRecorder, replay_seconds
from canter.bench.report import Spread, flat_json, machine_info
from canter.core import profiling
from canter.core.errors import ConfigError, Interrupted
from canter.rl import distributed
from canter.rl.runner import OnPolicyRunner
from canter.runs.args import cpu_physics, init_rank, make_rank_env, parse_train_args, task_expert
from canter.runs.launch import launch
from canter.sim.cpu import CpuSimulator

FIGURES = ("step_fps", "step_inference_fps", "total_fps", "iteration_time_s")
RAW_FIGURES = ("raw_env_states_fps", "total_over_raw", "physics_over_raw")


@dataclass(kw_only=True)
class TrainBenchResult:
    """`canter bench train`: the three FPS figures and the iteration time (median, min, max over the
    iterations after the first; summed over ranks), with the run's facts. to_json() gives the
    report's flat keys; from_json() reads them back (a launched run's rank 0 writes them)."""

    task: str
    nproc: int
    num_envs: int
    num_envs_per_process: int
    backend: str
    device: str
    dist_backend: str | None
    cores_per_process: int
    sim_threads_per_process: int | None
    rollout_torch_threads: int
    learn_torch_threads: int
    model_path: str
    algo: str
    num_steps_per_env: int
    iterations: int
    wall_time_s: float
    env_steps: int
    mean_return: float
    step_fps: Spread
    step_inference_fps: Spread
    total_fps: Spread
    iteration_time_s: Spread
    profile_trace: str | None = None
    # seconds per iteration in each phase (canter.core.profiling.PHASES, medians over the iterations
    # after the first; "other": the iteration time the phases leave, e.g. the runner's bookkeeping)
    phase_seconds: dict[str, float] = field(default_factory=dict)
    minibatch_steps: int = 0  # gradient steps per update (epochs x minibatches; 1 for A2C)
    # --raw-every: iterations per window (0: off); raw Batch on each window's states, steps/s; total FPS
    # of the window / that raw figure; the last iteration's physics phase / raw on the same states
    raw_every: int = 0
    raw_env_states_fps: Spread | None = None
    total_over_raw: Spread | None = None
    physics_over_raw: Spread | None = None
    raw_windows: list[dict[str, float]] = field(default_factory=list)
    machine: dict[str, object] = field(default_factory=dict)
    master_port: int | None = None  # the port the ranks met on (launched runs)
    stopped_by: str | None = None  # a stop signal (e.g. "SIGINT") that ended the run before its budget

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in flat_json(self).items()
                if v is not None or k not in ("profile_trace", "master_port", *RAW_FIGURES)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TrainBenchResult:
        names = {f.name for f in fields(cls)}
        values: dict[str, Any] = {k: v for k, v in data.items() if k in names and k not in (*FIGURES, *RAW_FIGURES)}
        values.update({k: Spread(median=data[k], min=data[f"{k}_min"], max=data[f"{k}_max"])
                       for k in (*FIGURES, *RAW_FIGURES) if k in data})
        values["machine"] = {k: v for k, v in data.items() if k not in names and not k.endswith(("_min", "_max"))}
        return cls(**values)


def run_train_bench(
    task: str, seconds: float, train_argv: list[str], progress: Any = None, profile_dir: Path | None = None,
    raw_every: int = 0, min_iterations: int = 2,
) -> TrainBenchResult:
    """Trains `task` for `seconds` of wall time (and at least `min_iterations` iterations, 2 or more: the
    first is warm-up) and returns the figures with the run's facts. profile_dir: mark the training
    phases (canter.core.profiling) and write a torch.profiler chrome trace of one extra iteration per
    rank there (trace_rank<r>.json). raw_every: raw Batch beside the training after every raw_every-th
    iteration (the module's doc)."""
    if not seconds > 0:
        raise ConfigError(f"--max-time: must be > 0, got {seconds}")
    if raw_every < 0:
        raise ConfigError(f"--raw-every: must be >= 0 (0: off), got {raw_every}")
    args = parse_train_args(task, [*train_argv, "--quiet"])
    args.agent.max_iterations = 10**9
    info = init_rank(args)
    if raw_every and info.world_size > 1:
        raise ConfigError("--raw-every: one process only (raw Batch runs beside one rank's training)")
    if raw_every and args.backend != "cpu":
        raise ConfigError(f"--raw-every: needs the cpu backend's mujoco.batch.Batch, not --backend {args.backend}")
    env = make_rank_env(args, info)
    sim = getattr(env, "sim", None)
    if raw_every and not isinstance(sim, CpuSimulator):
        raise ConfigError(f"--raw-every: needs the cpu backend's mujoco.batch.Batch; {task} runs on "
                          f"{type(sim).__name__ if sim is not None else 'no MuJoCo simulator'}")
    raw_sim = sim if raw_every and isinstance(sim, CpuSimulator) else None
    with profiling.measuring(ranges=profile_dir is not None), tempfile.TemporaryDirectory() as tmp:
        runner = OnPolicyRunner(env, args.agent, Path(tmp), seed=args.seed, cpu_physics=cpu_physics(args),
                                task=task, expert=task_expert(task, args, env))
        obs = env.reset()[0]
        runner.algorithm.train_mode()
        rows: list[dict[str, float]] = []
        windows: list[dict[str, float]] = []
        steps_per_iteration = env.num_envs * args.agent.algo.num_steps_per_env
        start = time.perf_counter()
        paused = [0.0]  # seconds of raw bursts: off the training clock

        def time_is_up() -> bool:  # asked before the row is appended: at least min_iterations rows in all
            return time.perf_counter() - start - paused[0] >= seconds and len(rows) >= max(2, min_iterations) - 1

        # Ctrl-C, SIGTERM or SIGHUP end the run after the iteration under way; the figures then cover
        # the iterations done (a second Ctrl-C raises KeyboardInterrupt at once)
        with runner.stop_signals():
            while not (rows and rows[-1]["stop"]):
                recorder = None  # the warm-up iteration (0) is no window's; then a burst after iterations K, 2K, ...
                if raw_sim is not None and len(rows) >= 1 and len(rows) % raw_every == 0:
                    recorder = StateRecorder(raw_sim)
                with recorder or contextlib.nullcontext():
                    obs, stats = runner.run_iteration(obs, None, should_stop=time_is_up)
                runner.iteration += 1
                stats = {**stats, **{f"phase/{k}": v for k, v in profiling.take_timing().items()}}
                rows.append(stats)
                if recorder is not None:
                    paused_from = time.perf_counter()
                    raw_seconds = replay_seconds(recorder.sim, recorder.states, recorder.nsteps)
                    windows.append(_raw_window(rows[-raw_every:], raw_seconds, steps_per_iteration))
                    paused[0] += time.perf_counter() - paused_from
                if progress is not None and info.is_main:
                    progress(time.perf_counter() - start - paused[0], stats)
        wall = time.perf_counter() - start - paused[0]
        profiling.stop_timing()
        stop_signal = int(rows[-1]["stop_signal"])
        if stop_signal and len(rows) < 2:  # the first iteration is warm-up: nothing measured yet
            raise Interrupted(stop_signal)
        trace = None
        if profile_dir is not None and not stop_signal:
            trace = _profile_iteration(runner, obs, Path(profile_dir) / f"trace_rank{info.rank}.json")
    measured = rows[1:]
    phases = {name: statistics.median(row[f"phase/{name}"] for row in measured) for name in profiling.PHASES}
    phases["other"] = max(0.0, statistics.median(row["iteration_time_s"] for row in measured) - sum(phases.values()))
    algo_cfg = args.agent.algo

    def raw_spread(key: str) -> Spread | None:
        return Spread.of([window[key] for window in windows]) if windows else None

    sim_threads = getattr(getattr(env, "sim", None), "num_threads", None)
    return TrainBenchResult(
        task=task, nproc=info.world_size, num_envs=env.num_envs * info.world_size, num_envs_per_process=env.num_envs,
        backend=args.backend, device=str(env.device), dist_backend=info.backend,
        cores_per_process=distributed.cores_per_process(), sim_threads_per_process=sim_threads,
        rollout_torch_threads=runner.rollout_threads, learn_torch_threads=runner.learn_threads,
        model_path=getattr(args.env, "model_path", None) or f"ale-py:{getattr(args.env, 'game', '')}", algo=args.agent.algo.algo, num_steps_per_env=args.agent.algo.num_steps_per_env,
        iterations=len(rows), wall_time_s=wall, stopped_by=signal.Signals(stop_signal).name if stop_signal else None,
        env_steps=len(rows) * env.num_envs * info.world_size * args.agent.algo.num_steps_per_env,
        mean_return=rows[-1]["mean_return"], step_fps=Spread.of([row["step_fps"] for row in measured]),
        step_inference_fps=Spread.of([row["step_inference_fps"] for row in measured]),
        total_fps=Spread.of([row["total_fps"] for row in measured]),
        iteration_time_s=Spread.of([row["iteration_time_s"] for row in measured]),
        profile_trace=str(trace) if trace is not None else None, phase_seconds=phases,
        minibatch_steps=1 if algo_cfg.algo == "a2c" else algo_cfg.num_learning_epochs * algo_cfg.num_mini_batches,
        raw_every=raw_every, raw_windows=windows, raw_env_states_fps=raw_spread("raw_env_states_fps"),
        total_over_raw=raw_spread("total_over_raw"), physics_over_raw=raw_spread("physics_over_raw"),
        machine=machine_info(),
    )


def _raw_window(rows: list[dict[str, float]], raw_seconds: float, steps_per_iteration: int) -> dict[str, float]:
    """One --raw-every window: its iterations' env steps over their wall time (total FPS), raw Batch
    on the states its last iteration stepped (one iteration's env steps in raw_seconds), their ratio,
    and the last iteration's physics phase over raw's time on the same states."""
    total_fps = steps_per_iteration * len(rows) / sum(row["iteration_time_s"] for row in rows)
    raw_fps = steps_per_iteration / raw_seconds
    return {"iterations": float(len(rows)), "total_fps": total_fps, "raw_env_states_fps": raw_fps,
            "total_over_raw": total_fps / raw_fps, "physics_over_raw": rows[-1]["phase/physics"] / raw_seconds}


def run_train_bench_launched(
    task: str,
    seconds: float,
    train_argv: list[str],
    nproc: int,
    *,
    profile_dir: str | None = None,
    port: int | None = None,
    cores_per_process: int | None = None,
) -> TrainBenchResult:
    """run_train_bench on nproc ranks started by torchrun's launcher (`python -m canter bench train`
    in each; cores_per_process: see canter.runs.launch.launch); rank 0's result, with the port the
    ranks met on."""
    if not seconds > 0:
        raise ConfigError(f"--max-time: must be > 0, got {seconds}")
    parse_train_args(task, [*train_argv, "--quiet"])  # one-line errors here, before any rank starts
    with tempfile.TemporaryDirectory(prefix="canter-bench-") as tmp:
        profile = ["--profile-dir", profile_dir] if profile_dir else []
        argv = ["bench", "train", task, "--max-time", str(seconds), "--out", tmp, *profile, *train_argv]
        port = launch("canter", argv, nproc, port=port, cores_per_process=cores_per_process)
        result = TrainBenchResult.from_json(json.loads((Path(tmp) / "train.json").read_text()))
    result.master_port = port
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
