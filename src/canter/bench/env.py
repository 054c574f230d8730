"""`canter bench env`: env step FPS of a full task against raw mujoco.batch.Batch on the same model.

Both are stepped with random actions / controls, alternating repetitions in one process so that
machine noise hits both alike; the report gives medians and min-max of each and their ratio (the
framework's overhead). The raw loop is the ceiling: Batch.step(nstep=decimation) and a numpy write
of random controls, nothing else.
"""

from __future__ import annotations

import dataclasses
import statistics
import time
from dataclasses import dataclass
from typing import Any

import mujoco
import numpy as np
import torch
from mujoco.batch import Batch

from canter.bench.report import Spread, flat_json, machine_info
from canter.core.device import available_cores, torch_threads
from canter.core.errors import ConfigError
from canter.envs.manager_env import ManagerBasedRLEnv
from canter.tasks import REGISTRY

# model fields a domain-randomized locomotion task gives per-env values
DR_FIELDS = (
    "geom_friction",
    "body_mass",
    "body_inertia",
    "body_ipos",
    "actuator_gainprm",
    "actuator_biasprm",
    "dof_damping",
)


@dataclass(kw_only=True)
class EnvBenchCfg:
    task: str = "ant"
    num_envs: int = 1024
    backend: str = "cpu"
    device: str = "cpu"
    model: str | None = None
    threads: int = 0
    seconds: float = 3.0  # per repetition and side
    repeats: int = 5
    seed: int = 0


def _time_loop(step, steps: int) -> float:
    start = time.perf_counter()
    for _ in range(steps):
        step()
    return time.perf_counter() - start


def _time_physics(env: ManagerBasedRLEnv) -> list[float]:
    """Wrap the env's `sim.step` to add its wall time to the returned one-element list (seconds)."""
    total = [0.0]
    sim_step = env.sim.step

    def timed_step(nstep: int = 1) -> None:
        start = time.perf_counter()
        sim_step(nstep)
        total[0] += time.perf_counter() - start

    env.sim.step = timed_step  # an instance attribute: this env only
    return total


@dataclass(kw_only=True)
class EnvBenchResult:
    """`canter bench env`: env and raw steps/s (median, min, max over repetitions), their ratio, and
    the run's facts. to_json() gives the report's flat keys."""

    task: str
    model_path: str
    num_envs: int
    threads: int
    backend: str
    device: str
    decimation: int
    timestep: float  # s
    repeats: int
    env_steps_per_s: Spread
    raw_rollout_steps_per_s: Spread
    ratio: Spread  # env / raw; the median is the ratio of the medians
    physics_steps_per_s: float
    env_physics_share: float | None  # the env's time in sim.step over its step time (CPU only)
    nonfinite_resets: int
    machine: dict[str, object]

    def to_json(self) -> dict[str, Any]:
        return flat_json(self)


@dataclass(kw_only=True)
class DrMemory:
    """Bytes of per-env model fields of `num_envs` envs with the randomized fields expanded."""

    num_envs: int
    expanded_fields: dict[str, int]  # field name -> bytes
    total_bytes: int

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def run_env_bench(cfg: EnvBenchCfg, progress=None) -> EnvBenchResult:
    if cfg.repeats < 1 or cfg.seconds <= 0:
        raise ConfigError("bench: repeats must be >= 1 and seconds > 0")
    spec = REGISTRY.get(cfg.task)
    env_cfg = spec.env_cfg()
    env_cfg.num_envs = cfg.num_envs
    env_cfg.seed = cfg.seed
    env_cfg.device = cfg.device
    env_cfg.sim.backend = cfg.backend  # type: ignore[assignment]
    env_cfg.sim.num_threads = cfg.threads
    if cfg.model is not None:
        env_cfg.model_path = cfg.model
    threads = cfg.threads or available_cores()
    with torch_threads(1):
        env = ManagerBasedRLEnv(env_cfg)
        env.reset()
        generator = torch.Generator(device=env.device).manual_seed(cfg.seed)
        model = env.sim.model
        raw = Batch(model, cfg.num_envs, nthread=threads)
        ctrl = raw.bind("ctrl")
        rng = np.random.default_rng(cfg.seed)
        low, high = model.actuator_ctrlrange[:, 0], model.actuator_ctrlrange[:, 1]
        decimation = env_cfg.decimation

        def raw_step() -> None:
            ctrl[:] = rng.uniform(low, high, ctrl.shape)
            raw.step(nstep=decimation)

        def env_step() -> None:
            env.step(
                torch.rand(cfg.num_envs, env.num_actions, generator=generator, device=env.device) * 2 - 1
            )

        physics_s = _time_physics(env)

        # warm-up; then size each repetition to about cfg.seconds
        warm = max(3, 2000 // cfg.num_envs)
        raw_per_step = _time_loop(raw_step, warm) / warm
        env_per_step = _time_loop(env_step, warm) / warm
        raw_steps = max(3, int(cfg.seconds / raw_per_step))
        env_steps = max(3, int(cfg.seconds / env_per_step))
        raw_fps, env_fps, shares = [], [], []
        for rep in range(cfg.repeats):
            raw_fps.append(cfg.num_envs * raw_steps / _time_loop(raw_step, raw_steps))
            physics_s[0] = 0.0
            env_s = _time_loop(env_step, env_steps)
            env_fps.append(cfg.num_envs * env_steps / env_s)
            shares.append(physics_s[0] / env_s)
            if progress is not None:
                progress(rep + 1, cfg.repeats, raw_fps[-1], env_fps[-1])
        ratios = [e / r for e, r in zip(env_fps, raw_fps, strict=True)]
        nonfinite = int(env.sim.nonfinite_total)
    env_stats, raw_stats = Spread.of(env_fps), Spread.of(raw_fps)
    return EnvBenchResult(
        task=cfg.task, model_path=env_cfg.model_path, num_envs=cfg.num_envs, threads=threads, backend=cfg.backend,
        device=str(env.device), decimation=decimation, timestep=float(model.opt.timestep), repeats=cfg.repeats,
        env_steps_per_s=env_stats, raw_rollout_steps_per_s=raw_stats,
        ratio=Spread(median=env_stats.median / raw_stats.median, min=min(ratios), max=max(ratios)),
        physics_steps_per_s=raw_stats.median * decimation,
        # the env's own physics call over its step time: the ratio to raw it would reach with the
        # raw loop on the env's states (standing robots have more contacts than raw's fallen ones)
        env_physics_share=statistics.median(shares) if env.device.type == "cpu" else None,
        nonfinite_resets=nonfinite, machine=machine_info(),
    )


def measure_dr_memory(model: mujoco.MjModel, num_envs: int, threads: int = 0) -> DrMemory:
    """Bytes of per-env model fields when the usual randomized fields are expanded (+ set_const)."""
    batch = Batch(model, num_envs, nthread=threads or available_cores())
    for name in DR_FIELDS:
        batch.expand(name)
    batch.set_const()
    per_field = {}
    for name in mujoco.batch.MODEL_FIELDS:
        values = batch.expanded(name)
        if values is not None:
            per_field[name] = int(values.nbytes)
    return DrMemory(num_envs=num_envs, expanded_fields=per_field, total_bytes=sum(per_field.values()))
