"""`canter bench latency`: single-observation inference latency of an exported policy.

For the task's policy network (the dog: MLP 256-128-64 ELU; a camera task's CNN and MLP; an Atari
game's Nature CNN) and a GRU variant of it, each backend is timed one call at a time (batch 1, one thread, time.perf_counter_ns around the call): onnxruntime on
the fp32 and dynamic-int8 files, the torch-free Canter runtime (onnxruntime + observation mapping),
TorchScript fp32 and int8, and eager torch (the trained policy's act_inference, and torch's dynamic
int8 quantization of it). Recurrent states are fed back call after call, as on a robot. Backends take
turns in `rounds` blocks so that background load spreads over all of them. Weights are the
policy's initial ones: latency does not depend on their values. A policy with image inputs is fed
the env's first frames (in the dtype the env emits), a game policy its frames only.
"""

from __future__ import annotations

import dataclasses
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np
import torch

from canter.bench.report import machine_info
from canter.core.device import torch_threads
from canter.core.errors import ConfigError
from canter.core.files import save_figure
from canter.core.rng import make_generator
from canter.envs.atari import AtariEnv, AtariEnvCfg
from canter.envs.manager_env import ManagerBasedRLEnv
from canter.export.exporter import described_actor
from canter.export.module import ExportableActor
from canter.export.onnx_export import image_input_name, save_onnx
from canter.export.quantize import quantize_actor, quantize_onnx
from canter.export.runtime import PolicyRuntime, make_session
from canter.export.torchscript import script_actor
from canter.rl.factory import make_policy
from canter.rl.modules import ActorCritic
from canter.tasks import REGISTRY


@dataclass(kw_only=True)
class LatencyCfg:
    """task: whose observation/action sizes and agent network are used. iterations: timed calls per
    backend (split into `rounds` blocks), after `warmup` untimed calls. gru_hidden_dim: size of the
    GRU variant's memory."""

    task: str = "dog-flat"
    iterations: int = 5000
    warmup: int = 200
    rounds: int = 5
    gru_hidden_dim: int = 256
    seed: int = 0

    def __post_init__(self) -> None:
        if self.iterations < self.rounds or self.rounds < 1:
            raise ConfigError(f"--iterations must be >= --rounds >= 1, got {self.iterations}, {self.rounds}")
        if self.warmup < 0:
            raise ConfigError(f"--warmup: must be >= 0, got {self.warmup}")
        if self.gru_hidden_dim < 1:
            raise ConfigError(f"--gru-hidden-dim: must be >= 1, got {self.gru_hidden_dim}")


Call = Callable[[], Any]


def _ort_call(path: Path, feed: dict[str, np.ndarray], state_names: list[str], state_shape: tuple[int, ...]) -> Call:
    session = make_session(path, 1)
    states = [np.zeros(state_shape, dtype=np.float32) for _ in state_names]
    feed = dict(feed)

    def call() -> None:
        feed.update(zip(state_names, states, strict=True))
        outputs = cast(list[np.ndarray], session.run(None, feed))
        states[:] = outputs[1:]

    return call


def _module_call(module: Callable[..., Any], inputs: tuple[torch.Tensor, ...], actor: ExportableActor) -> Call:
    states = list(actor.initial_state(1))

    def call() -> None:
        with torch.inference_mode():
            outputs = module(*inputs, *states)
            states[:] = outputs[1:]

    return call


def _eager_call(policy: ActorCritic, observation: dict[str, torch.Tensor]) -> Call:
    def call() -> None:
        with torch.inference_mode():
            policy.act_inference(observation)

    return call


def _backends(policy: ActorCritic, env: ManagerBasedRLEnv | AtariEnv, task: str, tmp: Path,
              obs: dict[str, np.ndarray]) -> dict[str, Call]:
    """The timed calls; obs: the env's first observation of env 0 per group the actor reads."""
    actor, group, metadata = described_actor(env, policy, task)
    game = metadata.game is not None
    fp32, int8 = tmp / f"{actor.architecture}.onnx", tmp / f"{actor.architecture}.int8.onnx"
    save_onnx(actor, metadata, fp32)
    quantize_onnx(fp32, int8, metadata)
    shape = (actor.num_layers, 1, actor.hidden_dim)
    runtime = PolicyRuntime(fp32)
    raw = {t.name: np.zeros(t.dim, dtype=np.float32) for t in metadata.observation_terms}
    images = {g: obs[g] for g in actor.image_groups}
    feed = {image_input_name(g): frames[None] for g, frames in images.items()}
    if group is not None:
        feed["obs"] = obs[group][None]
    vector = torch.from_numpy(obs[group][None]) if group is not None else torch.zeros(1, 0)
    frames = tuple(torch.from_numpy(images[g][None]) for g in actor.image_groups)
    scripted = () if game else (vector,)  # a game's TorchScript file takes the frames only
    observation = {g: torch.from_numpy(v[None]) for g, v in obs.items()}
    return {
        "onnxruntime fp32": _ort_call(fp32, feed, metadata.state_inputs, shape),
        "onnxruntime int8": _ort_call(int8, feed, metadata.state_inputs, shape),
        "canter runtime fp32 (raw terms)": lambda: runtime.act_raw(raw, images),
        "torchscript fp32": _module_call(script_actor(actor), (*scripted, *frames), actor),
        "torchscript int8": _module_call(script_actor(actor, quantize_actor(actor)), (*scripted, *frames), actor),
        "torch eager fp32": _eager_call(policy, observation),
        "torch eager int8": _module_call(quantize_actor(actor), (vector, *frames), actor),
    }


def _time(calls: dict[str, Call], cfg: LatencyCfg) -> dict[str, np.ndarray]:
    for call in calls.values():
        for _ in range(cfg.warmup):
            call()
    samples: dict[str, list[int]] = {name: [] for name in calls}
    per_round = cfg.iterations // cfg.rounds
    clock = time.perf_counter_ns
    for _ in range(cfg.rounds):
        for name, call in calls.items():
            timings = samples[name]
            for _ in range(per_round):
                start = clock()
                call()
                timings.append(clock() - start)
    return {name: np.asarray(values, dtype=np.float64) / 1e3 for name, values in samples.items()}


@dataclass(kw_only=True)
class LatencyRow:
    """One policy on one backend: latency per single-observation call, microseconds."""

    policy: str
    backend: str
    p50_us: float
    p99_us: float
    max_us: float
    mean_us: float
    calls: int


@dataclass(kw_only=True)
class LatencyResult:
    """`canter bench latency`: one row per (policy, backend), the networks timed and the machine."""

    task: str
    threads: int
    batch: int
    iterations: int
    warmup: int
    rounds: int
    networks: dict[str, Any]
    rows: list[LatencyRow]
    machine: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def run_latency_bench(cfg: LatencyCfg, progress: Callable[[str], None] | None = None) -> LatencyResult:
    """Latency rows {policy, backend, p50_us, p99_us, max_us, mean_us} for the MLP and the GRU."""
    spec = REGISTRY.get(cfg.task)
    if spec.agent_cfg is None:
        raise ConfigError(f"task {cfg.task!r} has no agent config")
    env_cfg = spec.env_cfg()
    env: ManagerBasedRLEnv | AtariEnv
    if isinstance(env_cfg, AtariEnvCfg):
        env = AtariEnv(dataclasses.replace(env_cfg, num_envs=1, num_threads=1))
    else:
        env_cfg.num_envs, env_cfg.device, env_cfg.sim.num_threads = 1, "cpu", 1
        env = ManagerBasedRLEnv(env_cfg)
    obs_all, _ = env.reset()
    rows: list[LatencyRow] = []
    networks: dict[str, Any] = {}
    for label, rnn in (("mlp", "none"), ("gru", "gru")):
        agent = spec.agent_cfg()
        agent.policy.rnn_type = rnn
        agent.policy.rnn_hidden_dim = cfg.gru_hidden_dim
        policy = make_policy(
            env.observation_shapes,
            env.num_actions,
            agent.policy,
            init_generator=make_generator(cfg.seed, "cpu"),
        )
        policy.eval()
        obs = {g: obs_all[g][0].numpy().copy() for g in policy.actor_obs_groups}
        obs = {g: v if g in policy.image_groups else v.astype(np.float32) for g, v in obs.items()}
        networks[label] = {
            "actor_hidden_dims": list(agent.policy.actor_hidden_dims),
            "activation": agent.policy.activation,
            "rnn": None
            if rnn == "none"
            else {"type": rnn, "hidden_dim": cfg.gru_hidden_dim, "num_layers": agent.policy.rnn_num_layers},
            "obs_dim": sum(int(v.shape[0]) for g, v in obs.items() if g not in policy.image_groups),
            "images": {g: list(obs[g].shape) for g in policy.image_groups},
            "cnn": None if not policy.image_groups else {"channels": list(agent.policy.cnn.channels),
                                                          "output_dim": agent.policy.cnn.output_dim},
            "num_actions": env.num_actions,
        }
        with tempfile.TemporaryDirectory() as tmp, torch_threads(1):
            if progress is not None:
                progress(f"{label}: exporting and timing {cfg.iterations} calls per backend")
            timings = _time(_backends(policy, env, cfg.task, Path(tmp), obs), cfg)
        for backend, us in timings.items():
            rows.append(LatencyRow(policy=label, backend=backend, p50_us=float(np.percentile(us, 50)),
                                   p99_us=float(np.percentile(us, 99)), max_us=float(us.max()),
                                   mean_us=float(us.mean()), calls=int(us.size)))
    return LatencyResult(task=cfg.task, threads=1, batch=1, iterations=cfg.iterations, warmup=cfg.warmup,
                         rounds=cfg.rounds, networks=networks, rows=rows, machine=machine_info())


def markdown_table(result: LatencyResult) -> str:
    lines = ["| policy | backend | p50 µs | p99 µs | max µs |", "|---|---|---:|---:|---:|"]
    for row in result.rows:
        lines.append(f"| {row.policy} | {row.backend} | {row.p50_us:.1f} | {row.p99_us:.1f} | {row.max_us:.0f} |")
    return "\n".join(lines) + "\n"


def plot_latency(result: LatencyResult, path: Path) -> None:
    """Grouped horizontal bars of p50 and p99 per backend, one panel per policy."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    policies = list(dict.fromkeys(row.policy for row in result.rows))
    fig, axes = plt.subplots(1, len(policies), figsize=(6 * len(policies), 4), sharex=True)
    for ax, policy in zip(np.atleast_1d(axes), policies, strict=True):
        rows = [row for row in result.rows if row.policy == policy]
        y = np.arange(len(rows))
        ax.barh(y - 0.2, [r.p50_us for r in rows], height=0.4, label="p50")
        ax.barh(y + 0.2, [r.p99_us for r in rows], height=0.4, label="p99")
        ax.set_yticks(y, [r.backend for r in rows])
        ax.invert_yaxis()
        ax.set_xscale("log")
        ax.set_xlabel("latency per observation, µs (1 thread, batch 1)")
        ax.set_title(f"{result.task} {policy}")
        ax.axvline(100.0, color="gray", linestyle="--", linewidth=0.8)
    handles, labels = np.atleast_1d(axes)[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper right", ncol=2, frameon=False)
    machine = result.machine
    fig.suptitle(f"{machine['cpu']}, commit {machine['commit']}", fontsize=8)
    save_figure(fig, path, dpi=120)
