"""Named ranges around the phases of training, for profilers and for a per-phase time budget.

The ranges Canter marks: "physics" (actions in, batched physics step), "reward_observation"
(terminations, rewards, resets, commands, observations), "inference" (the policy's forward pass and
sampling) and "update" (returns and the learning update). Off by default: `section()` then returns
one shared null context. `enable()` turns each range into a torch.profiler.record_function (shown in
torch.profiler's chrome traces on any device) and, when CUDA is available, an NVTX range as well
(shown by Nsight Systems: `nsys profile --trace=cuda,nvtx ...`).

Timing (`start_timing()` ... `take_timing()`, what `canter bench train` prints): the leaf phases of
PHASES add their host wall time to a running total each time they run. The leaves do not overlap, so
their sum plus "other" is the iteration. On CUDA a phase's host time is the time to queue its work
(the device runs behind), except where the phase waits for the device.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import Any

import torch

SECTIONS = ("physics", "reward_observation", "inference", "update")
# the leaves timed by start_timing(): physics and the four parts of reward_observation make up the env
# step; "storage" is the algorithm recording a step; "gae" and "update" the learning; "logging" the
# progress line, curves, TensorBoard and checkpoints
PHASES = ("physics", "terminations_rewards", "resets", "commands_events", "observations", "inference", "storage",
          "gae", "update", "logging")

_NULL = contextlib.nullcontext()
_state: dict[str, Any] = {"enabled": False, "nvtx": False, "timing": None}


class _Timed:
    """Adds the block's wall time to the running total of phase `name` (and runs `inner` around it)."""

    __slots__ = ("inner", "name", "start", "totals")

    def __init__(self, name: str, totals: dict[str, float], inner: Any):
        self.name = name
        self.totals = totals
        self.inner = inner
        self.start = 0.0

    def __enter__(self) -> _Timed:
        if self.inner is not None:
            self.inner.__enter__()
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.totals[self.name] += time.perf_counter() - self.start
        if self.inner is not None:
            self.inner.__exit__(*exc)


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


def start_timing() -> None:
    """Start adding up the wall time of each leaf phase (PHASES); take_timing() reads and restarts."""
    _state["timing"] = dict.fromkeys(PHASES, 0.0)


def take_timing() -> dict[str, float]:
    """Seconds per phase since start_timing() or the last take_timing(); {} when timing is off."""
    totals = _state["timing"]
    if totals is None:
        return {}
    _state["timing"] = dict.fromkeys(PHASES, 0.0)
    return dict(totals)


def stop_timing() -> None:
    _state["timing"] = None


@contextlib.contextmanager
def measuring(ranges: bool = False) -> Iterator[None]:
    """Within: phase timing on (start_timing), and the profiler ranges too where `ranges` (enable);
    both are off again on exit however the block ends (an error, a second Ctrl-C), so a process that
    goes on (a test, a notebook) is not left timing."""
    if ranges:
        enable()
    start_timing()
    try:
        yield
    finally:
        stop_timing()
        if ranges:
            disable()


def section(name: str) -> contextlib.AbstractContextManager[Any]:
    """A context manager marking the block as range `name` (a no-op unless enabled or timing)."""
    totals = _state["timing"]
    inner = _Section(name, _state["nvtx"]) if _state["enabled"] else None
    if totals is not None and name in totals:
        return _Timed(name, totals, inner)
    return _NULL if inner is None else inner
