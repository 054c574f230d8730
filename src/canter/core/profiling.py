"""Named ranges around the phases of training, for profilers.

The ranges Canter marks: "physics" (actions in, batched physics step), "reward_observation"
(terminations, rewards, resets, commands, observations), "inference" (the policy's forward pass and
sampling) and "update" (returns and the learning update). Off by default: `section()` then returns
one shared null context. `enable()` turns each range into a torch.profiler.record_function (shown in
torch.profiler's chrome traces on any device) and, when CUDA is available, an NVTX range as well
(shown by Nsight Systems: `nsys profile --trace=cuda,nvtx ...`).
"""

from __future__ import annotations

import contextlib
from typing import Any

import torch

SECTIONS = ("physics", "reward_observation", "inference", "update")

_NULL = contextlib.nullcontext()
_state = {"enabled": False, "nvtx": False}


class _Section:
    """record_function (+ NVTX push/pop) around a block."""

    __slots__ = ("name", "nvtx", "record")

    def __init__(self, name: str, nvtx: bool):
        self.name = name
        self.nvtx = nvtx
        self.record: Any = None

    def __enter__(self) -> _Section:
        if self.nvtx:
            torch.cuda.nvtx.range_push(self.name)
        self.record = torch.profiler.record_function(self.name)
        self.record.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.record.__exit__(*exc)
        if self.nvtx:
            torch.cuda.nvtx.range_pop()


def enable(nvtx: bool | None = None) -> None:
    """Turn the ranges on; NVTX only where CUDA is available (None: whenever it is)."""
    cuda = torch.cuda.is_available()
    _state["enabled"] = True
    _state["nvtx"] = cuda if nvtx is None else bool(nvtx and cuda)


def disable() -> None:
    _state["enabled"] = False
    _state["nvtx"] = False


def enabled() -> bool:
    return _state["enabled"]


def section(name: str) -> contextlib.AbstractContextManager[Any]:
    """A context manager marking the block as range `name` (a no-op unless enabled)."""
    if not _state["enabled"]:
        return _NULL
    return _Section(name, _state["nvtx"])
