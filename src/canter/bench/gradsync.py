"""`canter bench gradsync`: the gradient exchange of distributed PPO, measured two ways.

- flat: one all-reduce of every gradient concatenated (canter.rl.distributed.all_reduce_gradients,
  what training uses);
- ddp: torch.nn.parallel.DistributedDataParallel (bucketed all-reduces started during backward);
- none: the same step without any exchange (the compute both share).
Each rank runs minibatch steps of the task's real policy at its PPO minibatch size (forward, backward,
exchange, clip, Adam) on random observations; the three ways alternate in blocks of `steps`, and
the result is the median milliseconds per step of each way on rank 0.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
from torch import nn

from canter.bench.report import flat_json, machine_info
from canter.core.device import torch_threads
from canter.core.rng import make_generator
from canter.envs.manager_env import ManagerBasedRLEnv
from canter.rl import distributed
from canter.rl.factory import make_policy
from canter.rl.modules import ActorCritic
from canter.runs.args import init_rank, mujoco_env_cfg, parse_train_args
from canter.runs.launch import launch

WAYS = ("none", "flat", "ddp")


class _TrainForward(nn.Module):
    """forward = the policy's training forward pass, so DistributedDataParallel can wrap it."""

    def __init__(self, policy: ActorCritic):
        super().__init__()
        self.policy = policy

    def forward(self, obs: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        return self.policy.forward_train(obs)


def _loss(mean: torch.Tensor, std: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    """A loss that reaches every parameter (actor, std, critic)."""
    return mean.square().mean() + values.square().mean() - torch.log(std).mean()


@dataclass(kw_only=True)
class GradsyncResult:
    """`canter bench gradsync`: median ms per minibatch step of each way (and every block's figure)."""

    task: str
    nproc: int
    dist_backend: str | None
    minibatch_size_per_process: int
    num_parameters: int
    steps: int
    repeats: int
    none_ms: float
    none_ms_all: list[float]
    flat_ms: float
    flat_ms_all: list[float]
    ddp_ms: float
    ddp_ms_all: list[float]
    faster: str  # "flat" or "ddp"
    machine: dict[str, object] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return flat_json(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GradsyncResult:
        names = {f.name for f in fields(cls)}
        values: dict[str, Any] = {k: v for k, v in data.items() if k in names}
        values["machine"] = {k: v for k, v in data.items() if k not in names}
        return cls(**values)


def run_gradsync_bench(task: str, steps: int, repeats: int, train_argv: list[str]) -> GradsyncResult:
    """Per-step milliseconds of each way (median over repeats of `steps`-step blocks); run as every
    rank of a torchrun launch (or alone: then flat and ddp exchange nothing)."""
    args = parse_train_args(task, [*train_argv, "--quiet"])
    info = init_rank(args)
    algo = args.agent.algo
    batch = args.env.num_envs // info.world_size * algo.num_steps_per_env // algo.num_mini_batches
    env_cfg = mujoco_env_cfg(args, "bench gradsync")
    env_cfg.num_envs = 1  # the env only tells the observation shapes
    env = ManagerBasedRLEnv(env_cfg)
    policy = make_policy(
        env.observation_shapes, env.num_actions, args.agent.policy, init_generator=make_generator(0, "cpu")
    )
    policy = policy.to(env.device)
    generator = make_generator(1 + info.rank, env.device)
    obs = {
        g: torch.randn(batch, *shape, generator=generator, device=env.device)
        for g, shape in env.observation_shapes.items()
    }
    optimizer = torch.optim.Adam(policy.parameters(), lr=1e-5)
    ddp = (
        nn.parallel.DistributedDataParallel(_TrainForward(policy), forward_sync_buffers=False)
        if distributed.is_distributed()
        else None
    )
    forward_plain = _TrainForward(policy)

    def step(way: str) -> None:
        optimizer.zero_grad()
        module = ddp if way == "ddp" and ddp is not None else forward_plain
        _loss(*module(obs)).backward()
        if way == "flat":
            distributed.all_reduce_gradients(policy.parameters())
        nn.utils.clip_grad_norm_(policy.parameters(), 1.0)
        optimizer.step()

    times: dict[str, list[float]] = {way: [] for way in WAYS}
    with torch_threads(distributed.cores_per_process()):
        for way in WAYS:  # warm-up
            step(way)
        for _ in range(repeats):
            for way in WAYS:
                if distributed.is_distributed():
                    dist.barrier()
                start = time.perf_counter()
                for _ in range(steps):
                    step(way)
                times[way].append(1000.0 * (time.perf_counter() - start) / steps)
    medians = {way: statistics.median(times[way]) for way in WAYS}
    return GradsyncResult(
        task=task, nproc=info.world_size, dist_backend=info.backend, minibatch_size_per_process=batch,
        num_parameters=sum(p.numel() for p in policy.parameters()), steps=steps, repeats=repeats,
        none_ms=medians["none"], none_ms_all=times["none"], flat_ms=medians["flat"], flat_ms_all=times["flat"],
        ddp_ms=medians["ddp"], ddp_ms_all=times["ddp"], faster="flat" if medians["flat"] <= medians["ddp"] else "ddp",
        machine=machine_info(),
    )


def run_gradsync_launched(task: str, steps: int, repeats: int, nproc: int, train_argv: list[str]) -> GradsyncResult:
    """run_gradsync_bench on nproc ranks started by torchrun's launcher; rank 0's result."""
    parse_train_args(task, [*train_argv, "--quiet"])  # one-line errors here, before any rank starts
    with tempfile.TemporaryDirectory(prefix="canter-gradsync-") as tmp:
        launch("canter", ["bench", "gradsync", task, "--steps", str(steps), "--repeats", str(repeats),
                          "--out", tmp, *train_argv], nproc)
        return GradsyncResult.from_json(json.loads((Path(tmp) / "gradsync.json").read_text()))
