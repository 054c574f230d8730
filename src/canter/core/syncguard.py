"""Find host synchronizations in device code without a GPU.

On CUDA, reading a tensor's value on the host (`item`, `tolist`, `bool(t)`, `int(t)`, `.cpu()`,
`.numpy()`), an op whose output size depends on the data (`nonzero`, boolean-mask indexing, `unique`,
`masked_select`) and writing a Python number through a tensor index (the number goes to the device
by a synchronous copy from pageable memory) each stall the stream until the device catches up, and
make CUDA-graph capture of the step impossible. On the CPU they cost nothing, so they go unnoticed.

`HostSyncGuard` is a TorchFunctionMode that sees those calls on CPU tensors too: in "record" mode it
counts each call site (the innermost frame inside Canter) and in "error" mode it raises at once, so a
test can run the env step or the PPO update on Warp's CPU device and prove that nothing would stall a
GPU. torch.cuda.set_sync_debug_mode("error") is the same check on a real GPU.
"""

from __future__ import annotations

import collections
import traceback
from pathlib import Path
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

# methods and functions whose result is read on the host, or whose output size depends on the data
_HOST_READS = {
    torch.Tensor.item, torch.Tensor.tolist, torch.Tensor.__bool__, torch.Tensor.__int__, torch.Tensor.__float__,
    torch.Tensor.__index__, torch.Tensor.numpy, torch.Tensor.cpu, torch.Tensor.nonzero, torch.nonzero,
    torch.Tensor.unique, torch.unique, torch.masked_select, torch.Tensor.masked_select, torch.argwhere,
    torch.Tensor.argwhere, torch.Tensor.__format__,
}  # fmt: skip

# linear algebra that checks its result on the host on CUDA (LAPACK-style `info`, read with a sync and
# raised as an error): the `_ex` variants return `info` as a tensor instead
_CHECKED_LINALG = {
    torch.linalg.solve, torch.linalg.inv, torch.inverse, torch.linalg.cholesky, torch.cholesky,
    torch.linalg.lu_factor, torch.linalg.ldl_factor,
}  # fmt: skip


class HostSyncError(RuntimeError):
    """A host synchronization inside a HostSyncGuard(mode="error") block."""


def call_site(skip: tuple[str, ...] = ()) -> str:
    """The innermost frame inside Canter on the current stack, as "folder/file.py:line source" (frames
    of this module and of files whose path contains one of `skip` left out)."""
    frames = [f for f in traceback.extract_stack()
              if "/canter/" in f.filename and not any(s in f.filename for s in ("syncguard", *skip))]
    if not frames:
        return "<outside canter>"
    frame = frames[-1]
    return f"{Path(frame.filename).parent.name}/{Path(frame.filename).name}:{frame.lineno} {frame.line}"


def _is_bool_index(index: Any) -> bool:
    items = index if isinstance(index, tuple) else (index,)
    return any(isinstance(i, torch.Tensor) and i.dtype == torch.bool for i in items)


def _is_host_list_index(index: Any) -> bool:
    """A Python list (or nested sequence) in an index: torch turns it into a CPU index tensor and copies
    it to the device from pageable memory on every call (not allowed while a CUDA graph is captured)."""
    items = index if isinstance(index, tuple) else (index,)
    return any(isinstance(i, list) for i in items)


def _is_scalar_tensor_index(index: Any) -> bool:
    """A 0-dim integer tensor in an index (`x[:, ids[0]]`): torch reads its value on the host to select
    with it (on CUDA a synchronous copy, refused while a CUDA graph is captured)."""
    items = index if isinstance(index, tuple) else (index,)
    return any(isinstance(i, torch.Tensor) and i.dim() == 0 and i.dtype != torch.bool for i in items)


def _is_tensor_index(index: Any) -> bool:
    items = index if isinstance(index, tuple) else (index,)
    return any(isinstance(i, torch.Tensor) for i in items)


class HostSyncGuard(TorchFunctionMode):
    """Counts (mode="record") or refuses (mode="error") host synchronizations, by Canter call site.

    Flagged: item, tolist, bool/int/float/index of a tensor, cpu(), numpy(), nonzero/argwhere,
    unique, masked_select, indexing or assigning with a boolean mask, a Python list or a 0-dim integer
    tensor, assigning a
    Python number or list through a tensor index, torch.tensor / torch.as_tensor of host data, and
    the linear algebra that checks its result on the host on CUDA (linalg.solve, inv, cholesky, ...).
    A write of a Python scalar through a plain slice (`t[:] = 0`) is a fill kernel, not a copy, and passes.
    """

    def __init__(self, mode: str = "record"):
        super().__init__()
        if mode not in ("record", "error"):
            raise ValueError(f"mode must be 'record' or 'error', got {mode!r}")
        self.mode = mode
        self.sites: collections.Counter[str] = collections.Counter()

    def _flag(self, what: str) -> None:
        site = f"{what} at {call_site()}"
        if self.mode == "error":
            raise HostSyncError(f"host synchronization: {site}")
        self.sites[site] += 1

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in _HOST_READS:
            name = getattr(func, "__name__", str(func))
            self._flag(name)
        elif func in _CHECKED_LINALG:
            self._flag(f"{func.__name__} checking its result on the host (the _ex variant does not)")
        elif func is torch.Tensor.__getitem__ and len(args) > 1 and _is_bool_index(args[1]):
            self._flag("boolean-mask indexing")
        elif func is torch.Tensor.__getitem__ and len(args) > 1 and _is_host_list_index(args[1]):
            self._flag("a Python list as an index (copied to the device on every call)")
        elif func is torch.Tensor.__getitem__ and len(args) > 1 and _is_scalar_tensor_index(args[1]):
            self._flag("a 0-dim tensor as an index (its value is read on the host)")
        elif func is torch.Tensor.__setitem__ and len(args) > 2:
            index, value = args[1], args[2]
            if _is_bool_index(index):
                self._flag("boolean-mask assignment")
            elif _is_scalar_tensor_index(index):
                self._flag("a 0-dim tensor as an index (its value is read on the host)")
            elif _is_host_list_index(index):
                self._flag("a Python list as an index (copied to the device on every call)")
            elif _is_tensor_index(index) and not isinstance(value, torch.Tensor):
                self._flag("host value written through a tensor index")
        elif func in (torch.tensor, torch.as_tensor) and args and not isinstance(args[0], torch.Tensor):
            self._flag(f"{func.__name__} of host data")
        return func(*args, **kwargs)

    def report(self) -> str:
        return "\n".join(f"{count:5d}  {site}" for site, count in self.sites.most_common())
