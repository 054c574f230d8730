"""Data-parallel training over torch.distributed: one process per rank, each with its own envs.

Launch with `canter train TASK --nproc N` (torchrun's launcher, started in-process) or
`torchrun --nproc-per-node N -m canter.train TASK ...`; several machines join through torchrun's
rendezvous flags. Backend: gloo on the CPU, NCCL on CUDA. Without torchrun's environment (RANK,
WORLD_SIZE, ...) every helper here is a no-op and training runs in one process as before.

What keeps the ranks identical — every rank holds bitwise the same parameters after every update:
- initial parameters: drawn from the base seed on every rank, then broadcast from rank 0;
- gradients: one flat all-reduce (mean over ranks) per minibatch, before clipping and Adam;
- observation normalizers: at every env step the ranks all-gather their batch moments (count, mean,
  var) and every rank merges them in rank order with Chan et al.'s formula, so the statistics are
  exactly those of all ranks' samples and bitwise the same everywhere;
- adaptive learning rate: the KL of each minibatch is averaged over ranks before the schedule reads it.
What differs between ranks: env seeds and the algorithm's generator (action noise, minibatch order).
"""

from __future__ import annotations

import datetime
import hashlib
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import torch
import torch.distributed as dist
from torch import nn

from canter.core.device import available_cores
from canter.core.errors import CanterError
from canter.rl.normalizer import EmpiricalNormalizer

DEFAULT_TIMEOUT_S = 300.0


@dataclass(frozen=True)
class DistInfo:
    """Where this process sits: global rank and world size, rank and process count on this machine,
    and the process-group backend (None when not distributed)."""

    rank: int = 0
    world_size: int = 1
    local_rank: int = 0
    local_world_size: int = 1
    backend: str | None = None

    @property
    def is_main(self) -> bool:
        return self.rank == 0


def _env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    if value is None:
        return default
    try:
        return int(value)
    except ValueError as err:
        raise CanterError(f"environment variable {name}={value!r} is not an integer") from err


def launched_world_size() -> int:
    """WORLD_SIZE set by torchrun (1 without it)."""
    return _env_int("WORLD_SIZE", 1)


def rank_device(name: str) -> str:
    """The device of this rank: "cuda" (or "auto" with CUDA) becomes cuda:LOCAL_RANK under torchrun."""
    if launched_world_size() > 1 and (name == "cuda" or (name == "auto" and torch.cuda.is_available())):
        return f"cuda:{_env_int('LOCAL_RANK', 0)}"
    return name


def init(device: torch.device, timeout_s: float = DEFAULT_TIMEOUT_S) -> DistInfo:
    """Joins the process group torchrun set up (gloo on the CPU, NCCL on CUDA); a no-op when this
    process was not started by torchrun. A collective that waits longer than timeout_s for another
    rank (hung, or its machine gone) raises instead of hanging."""
    world_size = launched_world_size()
    if world_size <= 1:
        return DistInfo()
    if not timeout_s > 0:
        raise CanterError(f"--dist-timeout: must be > 0, got {timeout_s}")
    backend = "nccl" if device.type == "cuda" else "gloo"
    if device.type == "cuda":
        torch.cuda.set_device(device)
    if not dist.is_initialized():
        dist.init_process_group(backend, timeout=datetime.timedelta(seconds=timeout_s))
    return info()


def info() -> DistInfo:
    """This process's DistInfo (rank 0 of 1 when torch.distributed is not initialized)."""
    if not (dist.is_available() and dist.is_initialized()):
        return DistInfo()
    return DistInfo(
        rank=dist.get_rank(),
        world_size=dist.get_world_size(),
        local_rank=_env_int("LOCAL_RANK", 0),
        local_world_size=_env_int("LOCAL_WORLD_SIZE", 1),
        backend=str(dist.get_backend()),
    )


def is_distributed() -> bool:
    return dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1


CORES_VARIABLE = "CANTER_CORES_PER_PROCESS"


def cores_per_process() -> int:
    """Cores each process may keep busy: the size of its MuJoCo thread pool and of torch's learning
    threads. CANTER_CORES_PER_PROCESS when set (the scaling benchmark gives every process the same
    cores whatever their number), else this machine's cores shared evenly by the ranks on it
    (LOCAL_WORLD_SIZE), at least 1, so ranks never oversubscribe the machine."""
    if os.environ.get(CORES_VARIABLE):
        cores = _env_int(CORES_VARIABLE, 1)
        if cores < 1:
            raise CanterError(f"{CORES_VARIABLE}: must be >= 1, got {cores}")
        return cores
    return max(1, available_cores() // max(1, _env_int("LOCAL_WORLD_SIZE", 1)))


def shutdown() -> None:
    """Leaves the process group (after the last collective of a run). The ranks first meet at a
    barrier, so none tears gloo's connections down while rank 0 is still writing its results:
    a rank that left early was once seen to die of SIGABRT in gloo's teardown in CI."""
    if dist.is_available() and dist.is_initialized():
        try:
            if dist.get_world_size() > 1:
                dist.barrier()
        finally:
            dist.destroy_process_group()


def is_peer_failure(err: BaseException) -> bool:
    """Whether err says another rank crashed, was killed, or stopped answering."""
    if isinstance(err, dist.DistError):
        return True
    text = str(err)
    markers = ("Connection closed by peer", "Connection reset by peer", "Broken pipe", "Timed out", "timed out", "NCCL")
    return isinstance(err, RuntimeError) and any(marker in text for marker in markers)


# --- collectives of training ----------------------------------------------------------------------
def all_reduce_sum(values: torch.Tensor) -> torch.Tensor:
    """Σ over ranks of `values` (any shape), as a new tensor; `values` itself without distribution."""
    if not is_distributed():
        return values
    values = values.clone()
    dist.all_reduce(values, op=dist.ReduceOp.SUM)
    return values


def all_reduce_mean(value: torch.Tensor) -> torch.Tensor:
    """The mean over ranks of `value` (itself without distribution)."""
    if not is_distributed():
        return value
    return all_reduce_sum(value) / dist.get_world_size()


def all_reduce_gradients(parameters: Iterable[nn.Parameter]) -> None:
    """Replaces every gradient by its mean over ranks, with one flat all-reduce of all of them.

    Parameters without a gradient count as zero gradients, so every rank sends the same layout.
    """
    if not is_distributed():
        return
    parameters = [p for p in parameters if p.requires_grad]
    grads = [p.grad if p.grad is not None else torch.zeros_like(p) for p in parameters]
    flat = torch.cat([g.reshape(-1) for g in grads])
    dist.all_reduce(flat, op=dist.ReduceOp.SUM)
    flat /= dist.get_world_size()
    offset = 0
    for parameter in parameters:
        numel = parameter.numel()
        parameter.grad = flat[offset : offset + numel].view_as(parameter)
        offset += numel


@torch.no_grad()
def update_normalizers(normalizers: nn.ModuleDict | Mapping[str, nn.Module], obs: Mapping[str, torch.Tensor]) -> None:
    """Feeds obs[group] to every EmpiricalNormalizer; across ranks the statistics of all ranks'
    samples are merged, identically on every rank (one all-gather per call).

    Each rank packs, per group, (count, mean, var) in float64 (exact for float32 statistics and
    counts below 2^53); every rank then merges rank 0's batch, rank 1's, ... in that order.
    """
    groups = [(g, n) for g, n in normalizers.items() if isinstance(n, EmpiricalNormalizer) and n.training]
    if not groups:
        return
    if not is_distributed():
        for group, normalizer in groups:
            normalizer.update(obs[group])
        return
    parts: list[torch.Tensor] = []
    for group, normalizer in groups:
        count, mean, var = normalizer.moments(obs[group])
        count_tensor = torch.full((1,), float(count), dtype=torch.float64, device=mean.device)
        parts += [count_tensor, mean.reshape(-1).double(), var.reshape(-1).double()]
    local = torch.cat(parts)
    gathered = [torch.empty_like(local) for _ in range(dist.get_world_size())]
    dist.all_gather(gathered, local)
    for packed in gathered:
        offset = 0
        for _, normalizer in groups:
            size = normalizer.mean.numel()
            count = packed[offset].to(torch.int64)
            mean = packed[offset + 1 : offset + 1 + size].view_as(normalizer.mean).to(normalizer.mean.dtype)
            var = packed[offset + 1 + size : offset + 1 + 2 * size].view_as(normalizer.var).to(normalizer.var.dtype)
            offset += 1 + 2 * size
            normalizer.merge(count, mean, var)  # every rank has >= 1 env, so count > 0


def broadcast_module(module: nn.Module, src: int = 0) -> None:
    """Copies every parameter and buffer of rank `src`'s module into the others' (in place)."""
    if not is_distributed():
        return
    with torch.no_grad():
        for tensor in [*module.parameters(), *module.buffers()]:
            dist.broadcast(tensor.data, src=src)


def state_digest(tensors: Iterable[tuple[str, torch.Tensor]]) -> str:
    """SHA-256 of the names and raw bytes of the tensors: equal digests ⇔ bitwise-equal state."""
    hasher = hashlib.sha256()
    for name, tensor in tensors:
        hasher.update(name.encode())
        data = tensor.detach().cpu().contiguous().reshape(-1)
        hasher.update(data.view(torch.uint8).numpy().tobytes() if data.numel() else b"")
    return hasher.hexdigest()


# --- objects (checkpoints, run directories) ------------------------------------------------------
def all_gather_object(obj: Any) -> list[Any]:
    """[obj of rank 0, obj of rank 1, ...] on every rank ([obj] without distribution)."""
    if not is_distributed():
        return [obj]
    out: list[Any] = [None] * dist.get_world_size()
    dist.all_gather_object(out, obj)
    return out


def gather_object(obj: Any) -> list[Any] | None:
    """Every rank's obj on rank 0 (in rank order), None on the other ranks."""
    if not is_distributed():
        return [obj]
    out: list[Any] | None = [None] * dist.get_world_size() if dist.get_rank() == 0 else None
    dist.gather_object(obj, out, dst=0)
    return out


def broadcast_object(obj: Any) -> Any:
    """Rank 0's obj on every rank (the argument of the other ranks is ignored)."""
    if not is_distributed():
        return obj
    box = [obj]
    dist.broadcast_object_list(box, src=0)
    return box[0]


def scatter_object(objects: list[Any] | None) -> Any:
    """objects[r] (a list held by rank 0) on rank r."""
    if not is_distributed():
        assert objects is not None
        return objects[0]
    out: list[Any] = [None]
    dist.scatter_object_list(out, objects if dist.get_rank() == 0 else None, src=0)
    return out[0]


def to_cpu(tree: Any) -> Any:
    """A copy of a nested dict/list/tuple with every tensor moved to the CPU (for pickling)."""
    if isinstance(tree, torch.Tensor):
        return tree.detach().cpu()
    if isinstance(tree, dict):
        return {key: to_cpu(value) for key, value in tree.items()}
    if isinstance(tree, (list, tuple)):
        return type(tree)(to_cpu(value) for value in tree)
    return tree
