"""`canter bench env`: env step FPS of a full task against raw mujoco.batch.Batch on the same model.

Both are stepped with random actions / controls, alternating repetitions in one process so that
machine noise hits both alike; the report gives medians and min-max of each and their ratio (the
framework's overhead). The raw loop is the ceiling: Batch.step(nstep=decimation) and a numpy write
of random controls, nothing else. Raw's robots fall once and lie still, which costs MuJoCo less than
the env's robots, which are reset onto their feet; so on the cpu backend a third side, *raw on the
env's states*, steps the env's own Batch (its model, its per-env fields) from integration states
recorded in the env's step (controls, warm starts and pushes included), the same
Batch.step(nstep=decimation) after a row copy of the recorded state: raw's cost on the states the
env actually simulates. On a CUDA device (warp backend) the raw side is MuJoCo Warp itself:
a second set of worlds of the same model stepped by a captured CUDA graph of `decimation` mjw.step
calls after a torch write of random controls; both sides end their timed loop with a device
synchronization, and the report adds the GPU memory in use (device-wide: Warp's arrays are not
torch's).
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
from canter.sim.cpu import CpuSimulator
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
    cuda_graph: bool = False  # EnvCfg.cuda_graph


def time_loop(step, steps: int, device: torch.device | None = None) -> float:
    """Wall time of `steps` calls of step(); on CUDA the queued work is waited for at both ends."""
    cuda = device is not None and device.type == "cuda"
    if cuda:
        torch.cuda.synchronize(device)
    start = time.perf_counter()
    for _ in range(steps):
        step()
    if cuda:
        torch.cuda.synchronize(device)
    return time.perf_counter() - start


def gpu_memory_used(device: torch.device) -> int | None:
    """Bytes in use on a CUDA device (all allocators: torch's and Warp's), None elsewhere."""
    if device.type != "cuda":
        return None
    free, total = torch.cuda.mem_get_info(device)
    return int(total - free)


class _RawWarp:
    """Raw MuJoCo Warp on the env's device: its own worlds of the env's model, `decimation` mjw.step
    calls per step in one captured CUDA graph, controls drawn uniformly in ctrlrange by torch."""

    def __init__(self, env: ManagerBasedRLEnv, num_envs: int, decimation: int, seed: int):
        import mujoco_warp as mjw

        from canter.sim.warp import WarpSimulator

        sim = env.sim
        assert isinstance(sim, WarpSimulator)
        self.sim = WarpSimulator(sim.model, num_envs, sim.cfg, env.device)
        m, d = self.sim.mjw_model, self.sim.mjw_data
        def substeps() -> None:
            for _ in range(decimation):
                mjw.step(m, d)

        self._substeps = substeps
        low, high = (torch.as_tensor(sim.model.actuator_ctrlrange[:, i], dtype=torch.float32, device=env.device)
                     for i in (0, 1))
        self.low, self.span = low, high - low
        self.generator = torch.Generator(device=env.device).manual_seed(seed)
        self.decimation = decimation

    def step(self) -> None:
        ctrl = self.sim.ctrl
        torch.rand(ctrl.shape, generator=self.generator, device=ctrl.device, out=ctrl)
        ctrl.mul_(self.span).add_(self.low)
        self.sim._run(("raw", self.decimation), self._substeps)


# the raw-on-env-states side replays, in turn, the states of every RECORD_EVERY-th of
# RECORDED_STATES * RECORD_EVERY env steps (about a second of random actions: standing, falling, resets)
RECORDED_STATES = 16
RECORD_EVERY = 3


class StateRecorder:
    """`with StateRecorder(sim, every) as recorder:` keeps, for every `every`-th call of the cpu
    simulator's step while the block runs, the integration state it was about to step (its controls
    set) and the call's nstep; `recorder.states` and `recorder.nsteps`. Recording copies rows and
    changes nothing the env does; the simulator's own step is back when the block ends."""

    def __init__(self, sim: CpuSimulator, every: int = 1):
        self.sim, self.every = sim, every
        self.states: list[np.ndarray] = []
        self.nsteps: list[int] = []

    def __enter__(self) -> StateRecorder:
        sim, rows = self.sim, self.sim.batch.state
        sim_step = sim.step  # the class's method, or a wrapper already in place (_time_physics)
        calls = [0]

        def recording_step(nstep: int = 1) -> None:
            if calls[0] % self.every == 0:
                self.states.append(rows.copy())
                self.nsteps.append(nstep)
            calls[0] += 1
            sim_step(nstep)

        self._sim_step = sim_step
        sim.step = recording_step  # an instance attribute, put back on exit
        return self

    def __exit__(self, *exc: object) -> None:
        self.sim.step = self._sim_step


class RawOnEnvStates:
    """Raw Batch.step(nstep=decimation) of the env's own batch from integration states recorded in
    the env's step (cpu backend): each step copies the next recorded state into the rows and steps.
    `step` leaves the env's batch on a recorded state; `restore()` puts the env's state back."""

    def __init__(self, env: ManagerBasedRLEnv, sim: CpuSimulator, action, decimation: int,
                 count: int = RECORDED_STATES, every: int = RECORD_EVERY):
        self.batch, self.rows, self.decimation = sim.batch, sim.batch.state, decimation
        with StateRecorder(sim, every) as recorder:
            for _ in range(count * every):
                env.step(action())
        self.states = recorder.states
        self.warnings = sim._warning_numbers
        self.saved = self.rows.copy()
        self.next = 0

    def save(self) -> None:
        self.saved[...] = self.rows

    def step(self) -> None:
        self.rows[...] = self.states[self.next]
        self.next = (self.next + 1) % len(self.states)
        self.batch.step(nstep=self.decimation)

    def restore(self) -> None:
        self.rows[...] = self.saved
        self.warnings[...] = 0  # recorded states are ones the env stepped; nothing of this is the env's


def replay_seconds(sim: CpuSimulator, states: list[np.ndarray], nsteps: list[int]) -> float:
    """Wall time of raw Batch.step on the env's own batch over recorded states (StateRecorder): each
    state copied into the rows and stepped by its call's nstep, in order. The env's rows and its
    MuJoCo warnings are put back afterwards, so it goes on as if this had not run."""
    batch, rows, warnings = sim.batch, sim.batch.state, sim._warning_numbers
    saved, saved_warnings = rows.copy(), warnings.copy()
    start = time.perf_counter()
    for state, nstep in zip(states, nsteps, strict=True):
        rows[...] = state
        batch.step(nstep=nstep)
    seconds = time.perf_counter() - start
    rows[...] = saved
    warnings[...] = saved_warnings
    return seconds


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
    # raw Batch.step on integration states recorded from the env (CPU only), and env / that
    raw_env_states_steps_per_s: Spread | None = None
    ratio_env_states: Spread | None = None
    nonfinite_resets: int
    raw: str = "mujoco.batch.Batch"  # what the raw side ran: MuJoCo C's Batch, or "mujoco_warp" on CUDA
    gpu_memory_bytes: int | None = None  # in use on the device after the run (CUDA only)
    cuda_graph: bool = False  # asked for the env step as a CUDA graph
    cuda_graph_active: bool = False  # and it was replayed
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
    spec = REGISTRY.get_mujoco(cfg.task, "bench env")
    env_cfg = spec.env_cfg()
    env_cfg.num_envs = cfg.num_envs
    env_cfg.seed = cfg.seed
    env_cfg.device = cfg.device
    env_cfg.sim.backend = cfg.backend  # type: ignore[assignment]
    env_cfg.sim.num_threads = cfg.threads
    env_cfg.cuda_graph = cfg.cuda_graph
    if cfg.model is not None:
        env_cfg.model_path = cfg.model
    threads = cfg.threads or available_cores()
    with torch_threads(1):
        env = ManagerBasedRLEnv(env_cfg)
        env.reset()
        generator = torch.Generator(device=env.device).manual_seed(cfg.seed)
        model = env.sim.model
        decimation = env_cfg.decimation
        device = env.device
        on_gpu = device.type == "cuda"
        if on_gpu:
            raw_warp = _RawWarp(env, cfg.num_envs, decimation, cfg.seed)
            raw_step = raw_warp.step
        else:
            raw = Batch(model, cfg.num_envs, nthread=threads)
            ctrl = raw.bind("ctrl")
            rng = np.random.default_rng(cfg.seed)
            low, high = model.actuator_ctrlrange[:, 0], model.actuator_ctrlrange[:, 1]

            def raw_step() -> None:
                ctrl[:] = rng.uniform(low, high, ctrl.shape)
                raw.step(nstep=decimation)

        def random_action() -> torch.Tensor:
            return torch.rand(cfg.num_envs, env.num_actions, generator=generator, device=env.device) * 2 - 1

        def env_step() -> None:
            env.step(random_action())

        physics_s = _time_physics(env) if not on_gpu else [0.0]

        # warm-up; then size each repetition to about cfg.seconds
        warm = max(3, 2000 // cfg.num_envs)
        raw_per_step = time_loop(raw_step, warm, device) / warm
        env_per_step = time_loop(env_step, warm, device) / warm
        raw_steps = max(3, int(cfg.seconds / raw_per_step))
        env_steps = max(3, int(cfg.seconds / env_per_step))
        sim = env.sim
        replay = RawOnEnvStates(env, sim, random_action, decimation) if isinstance(sim, CpuSimulator) else None
        if replay is not None:
            replay.save()
            replay_per_step = time_loop(replay.step, warm, device) / warm
            replay.restore()
            replay_steps = max(3, int(cfg.seconds / replay_per_step))
        raw_fps, env_fps, shares, replay_fps = [], [], [], []
        for rep in range(cfg.repeats):
            raw_fps.append(cfg.num_envs * raw_steps / time_loop(raw_step, raw_steps, device))
            if replay is not None:
                replay.save()
                replay_fps.append(cfg.num_envs * replay_steps / time_loop(replay.step, replay_steps, device))
                replay.restore()
            physics_s[0] = 0.0
            env_s = time_loop(env_step, env_steps, device)
            env_fps.append(cfg.num_envs * env_steps / env_s)
            shares.append(physics_s[0] / env_s)
            if progress is not None:
                progress(rep + 1, cfg.repeats, raw_fps[-1], env_fps[-1])
        ratios = [e / r for e, r in zip(env_fps, raw_fps, strict=True)]
        replay_stats = Spread.of(replay_fps) if replay_fps else None
        replay_ratios = [e / r for e, r in zip(env_fps, replay_fps, strict=True)] if replay_fps else []
        nonfinite = int(env.sim.nonfinite_total)
        memory = gpu_memory_used(device)
        graphed = env.cuda_graph
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
        raw_env_states_steps_per_s=replay_stats,
        ratio_env_states=None if replay_stats is None else Spread(
            median=env_stats.median / replay_stats.median, min=min(replay_ratios), max=max(replay_ratios)),
        nonfinite_resets=nonfinite, raw="mujoco_warp" if on_gpu else "mujoco.batch.Batch", gpu_memory_bytes=memory,
        cuda_graph=cfg.cuda_graph, cuda_graph_active=graphed is not None and graphed.active,
        machine=machine_info(),
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
