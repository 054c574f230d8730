"""`canter bench camera`: batched camera images/s, the camera's share of the env step, and, measured
in the same run, `mujoco.Renderer` rendering the same camera env by env (the classic way).

The timings alternate repetition by repetition (camera, the cpu camera's Batch.ray path when the
kernel renders, physics step, renderer loop) so that machine noise hits them alike; the result gives
medians and min-max. The renderer loop runs in a
child process (canter.bench.camera_renderer) with MUJOCO_GL set (egl, else osmesa), on the same
compiled model and the same positions of all envs. The camera's share of the step is
camera / (camera + step) per env step: the step is `env.step` with random actions for a task, or
`sim.step(decimation)` for a bare model.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import mujoco
import numpy as np
import torch

from canter.bench.report import machine_info
from canter.core.device import available_cores, torch_threads
from canter.core.errors import ConfigError
from canter.sensors import CameraCfg, make_camera
from canter.sensors.camera_cfg import CameraOutput
from canter.sensors.cpu_camera import CpuCamera
from canter.sim.backend import Simulator, make_simulator
from canter.sim.config import SimCfg
from canter.sim.cpu import CpuSimulator
from canter.sim.model import load_model

GL_BACKENDS = ("egl", "osmesa")


@dataclass(kw_only=True)
class CameraBenchCfg:
    """What to render: a registered task's scene or a bare MJCF model, and one of its cameras."""

    task: str | None = None  # a registered task (its env steps with random actions)
    model: str | None = None  # an MJCF path (its physics steps `decimation` substeps per env step)
    camera: str | None = None  # the MJCF camera (default: the model's first camera)
    num_envs: int = 256
    resolution: int = 64  # square images, pixels per side
    outputs: tuple[CameraOutput, ...] = ("depth",)
    backend: str = "cpu"
    device: str = "cpu"
    threads: int = 0  # MuJoCo's thread pool (0: all available cores)
    decimation: int = 10  # physics substeps per env step for a bare model (0.05 s at 5 ms)
    seconds: float = 1.0  # per repetition and side
    repeats: int = 5
    renderer_loop: bool = True  # also time the per-env mujoco.Renderer loop
    seed: int = 0


@dataclass(kw_only=True)
class CameraBenchResult:
    source: str  # task name or model path
    camera: str
    backend: str
    device: str
    num_envs: int
    width: int
    height: int
    outputs: list[str]
    threads: int
    repeats: int
    images_per_s: float  # median over repetitions
    images_per_s_min: float
    images_per_s_max: float
    images_per_cpu_s: float  # images per CPU-second (all threads): efficiency, robust to other load
    renderer_loop_images_per_cpu_s: float | None  # the same for the renderer child process
    camera_path: str  # "kernel" or "batch_ray" (cpu camera), "warp"
    batch_ray_images_per_s: float | None  # the cpu camera's Batch.ray path, median (kernel runs only)
    camera_ms: float  # one render of all envs, median
    step_ms: float  # one env step of all envs, median
    camera_share_of_step: float  # camera / (camera + step), medians
    renderer_loop_images_per_s: float | None  # per-env mujoco.Renderer, median (None: no GL)
    renderer_loop_images_per_s_min: float | None
    renderer_loop_images_per_s_max: float | None
    renderer_gl: str | None  # the MUJOCO_GL backend the loop ran on
    renderer_error: str | None  # why there is no loop figure
    ratio: float | None  # images_per_s / renderer_loop_images_per_s, medians
    load_average: tuple[float, float, float]  # os.getloadavg() at the end of the run
    machine: dict[str, object] = field(default_factory=dict)

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def _stats(values: list[float]) -> tuple[float, float, float]:
    return statistics.median(values), min(values), max(values)


def _time(work: Callable[[], object], count: int, cpu: list[float] | None = None) -> float:
    """Wall seconds per call; appends CPU seconds per call (this process, all threads) to `cpu`."""
    start, start_cpu = time.perf_counter(), time.process_time()
    for _ in range(count):
        work()
    if cpu is not None:
        cpu.append((time.process_time() - start_cpu) / count)
    return (time.perf_counter() - start) / count


class _RendererLoop:
    """The child process running the per-env mujoco.Renderer loop (camera_renderer.py)."""

    def __init__(
        self, model: mujoco.MjModel, qpos: np.ndarray, cam: int, size: int, outputs: tuple[str, ...]
    ):
        self.process: subprocess.Popen[str] | None = None
        self.gl: str | None = None
        self.error: str | None = None
        self._dir = tempfile.TemporaryDirectory(prefix="canter_camera_bench_")
        model_path = os.path.join(self._dir.name, "model.mjb")
        qpos_path = os.path.join(self._dir.name, "qpos.npy")
        mujoco.mj_saveModel(model, model_path, None)
        np.save(qpos_path, qpos)
        args = [model_path, qpos_path, str(cam), str(size), str(size), ",".join(outputs)]
        errors = []
        for gl in GL_BACKENDS:
            env = {**os.environ, "MUJOCO_GL": gl, "PYOPENGL_PLATFORM": gl}
            process = subprocess.Popen(
                [sys.executable, "-m", "canter.bench.camera_renderer", *args],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
            )  # fmt: skip
            assert process.stdout is not None
            if process.stdout.readline().strip() == "ready":
                self.process, self.gl = process, gl
                return
            process.kill()
            _, stderr = process.communicate()
            lines = [line for line in stderr.strip().splitlines() if line.strip()]
            errors.append(f"{gl}: {lines[-1] if lines else 'no output'}")
        self.error = "mujoco.Renderer unavailable (" + "; ".join(errors) + ")"

    def images_per_s(self, passes: int) -> tuple[float, float]:
        """(images per wall second, images per CPU-second of the child) over `passes` passes."""
        assert self.process is not None and self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(f"run {passes}\n")
        self.process.stdin.flush()
        wall, cpu = self.process.stdout.readline().split()
        return float(wall), float(cpu)

    def close(self) -> None:
        if self.process is not None:
            self.process.communicate("quit\n", timeout=30)
        self._dir.cleanup()


def _camera_name(model: mujoco.MjModel, name: str | None) -> str:
    if name is not None:
        return name
    if model.ncam == 0:
        raise ConfigError("bench camera: the model has no camera; add a <camera> to the MJCF")
    return mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_CAMERA, 0) or ""


def _scene(cfg: CameraBenchCfg) -> tuple[str, Simulator, Callable[[], None]]:
    """(source, simulator, one env step) for a task or a bare model."""
    if (cfg.task is None) == (cfg.model is None):
        raise ConfigError("bench camera: give exactly one of TASK or --model")
    if cfg.model is not None:
        if cfg.decimation < 1:
            raise ConfigError(f"bench camera: decimation must be >= 1, got {cfg.decimation}")
        model = load_model(cfg.model)
        sim_cfg = SimCfg(backend=cfg.backend, num_threads=cfg.threads)  # type: ignore[arg-type]
        sim = make_simulator(model, cfg.num_envs, sim_cfg, torch.device(cfg.device))
        sim.reset()
        sim.forward()
        return cfg.model, sim, lambda: sim.step(cfg.decimation)
    from canter.envs.manager_env import ManagerBasedRLEnv
    from canter.tasks import REGISTRY

    env_cfg = REGISTRY.get_mujoco(cfg.task or "", "bench camera").env_cfg()
    env_cfg.num_envs, env_cfg.seed, env_cfg.device = cfg.num_envs, cfg.seed, cfg.device
    env_cfg.sim.backend = cfg.backend  # type: ignore[assignment]
    env_cfg.sim.num_threads = cfg.threads
    env = ManagerBasedRLEnv(env_cfg)
    env.reset()
    generator = torch.Generator(device=env.device).manual_seed(cfg.seed)

    def env_step() -> None:
        env.step(torch.rand(cfg.num_envs, env.num_actions, generator=generator, device=env.device) * 2 - 1)

    return cfg.task or "", env.sim, env_step


def run_camera_bench(cfg: CameraBenchCfg, progress: Callable[[str], None] | None = None) -> CameraBenchResult:
    """Time the batched camera, the env step and the per-env renderer loop; see the module doc."""
    if cfg.repeats < 1 or cfg.seconds <= 0:
        raise ConfigError("bench camera: repeats must be >= 1 and seconds > 0")
    if cfg.num_envs < 1:
        raise ConfigError(f"bench camera: num_envs must be >= 1, got {cfg.num_envs}")
    with torch_threads(1):
        source, sim, env_step = _scene(cfg)
        name = _camera_name(sim.model, cfg.camera)
        camera_cfg = CameraCfg(name=name, width=cfg.resolution, height=cfg.resolution, outputs=cfg.outputs)
        camera = make_camera(sim, camera_cfg)
        reference = None  # the Batch.ray path, timed beside the kernel
        if isinstance(camera, CpuCamera) and camera.path == "kernel" and isinstance(sim, CpuSimulator):
            reference = CpuCamera(sim, camera_cfg, use_kernel=False)
        for _ in range(3):  # let the objects move a little so that frames differ; warm up
            env_step()
            camera.render()
        render_s = _time(camera.render, 2)
        step_s = _time(env_step, 2)
        loop = None
        if cfg.renderer_loop:
            qpos = sim.qpos.detach().to("cpu", torch.float64).numpy().copy()
            loop = _RendererLoop(sim.model, qpos, camera.cam_id, cfg.resolution, cfg.outputs)
        try:
            renders = max(2, int(cfg.seconds / render_s))
            steps = max(2, int(cfg.seconds / step_s))
            passes = 1
            if loop is not None and loop.process is not None:
                passes = max(1, int(cfg.seconds * loop.images_per_s(1)[0] / cfg.num_envs))
            camera_times, step_times, loop_rates, reference_times = [], [], [], []
            camera_cpu: list[float] = []
            loop_cpu_rates: list[float] = []
            for rep in range(cfg.repeats):
                camera_times.append(_time(camera.render, renders, camera_cpu))
                if reference is not None:
                    reference_times.append(_time(reference.render, max(2, renders // 4)))
                step_times.append(_time(env_step, steps))
                if loop is not None and loop.process is not None:
                    wall_rate, cpu_rate = loop.images_per_s(passes)
                    loop_rates.append(wall_rate)
                    loop_cpu_rates.append(cpu_rate)
                if progress is not None:
                    rate = cfg.num_envs / camera_times[-1]
                    other = f", renderer loop {loop_rates[-1]:,.0f}" if loop_rates else ""
                    progress(f"repetition {rep + 1}/{cfg.repeats}: camera {rate:,.0f} images/s{other}")
        finally:
            if loop is not None:
                loop.close()
    rates = [cfg.num_envs / t for t in camera_times]
    images, images_min, images_max = _stats(rates)
    camera_ms, step_ms = statistics.median(camera_times) * 1e3, statistics.median(step_times) * 1e3
    loop_median, loop_min, loop_max = _stats(loop_rates) if loop_rates else (None, None, None)
    return CameraBenchResult(
        source=source,
        camera=name,
        backend=cfg.backend,
        device=str(sim.device),
        num_envs=cfg.num_envs,
        width=cfg.resolution,
        height=cfg.resolution,
        outputs=list(cfg.outputs),
        threads=getattr(sim, "num_threads", None) or cfg.threads or available_cores(),
        repeats=cfg.repeats,
        images_per_s=images,
        images_per_s_min=images_min,
        images_per_s_max=images_max,
        images_per_cpu_s=cfg.num_envs / statistics.median(camera_cpu),
        renderer_loop_images_per_cpu_s=statistics.median(loop_cpu_rates) if loop_cpu_rates else None,
        camera_path=getattr(camera, "path", "warp"),
        batch_ray_images_per_s=statistics.median(cfg.num_envs / t for t in reference_times)
        if reference_times
        else None,
        camera_ms=camera_ms,
        step_ms=step_ms,
        camera_share_of_step=camera_ms / (camera_ms + step_ms),
        renderer_loop_images_per_s=loop_median,
        renderer_loop_images_per_s_min=loop_min,
        renderer_loop_images_per_s_max=loop_max,
        renderer_gl=None if loop is None else loop.gl,
        renderer_error=None if loop is None else loop.error,
        ratio=None if loop_median is None else images / loop_median,
        load_average=os.getloadavg(),
        machine=machine_info(),
    )


def result_path(out: str | Path) -> Path:
    """Where `--out DIR` writes the JSON result."""
    return Path(out) / "camera.json"
