"""Memory checks before large allocations: a request that cannot fit is a one-line ConfigError with
the estimate, instead of std::bad_alloc, an out-of-memory kill or minutes of swapping."""

from __future__ import annotations

import psutil
import torch

from canter.core.errors import ConfigError


def available_bytes(device: torch.device) -> int:
    """Memory that can be allocated now on `device`: the host's available memory for the CPU, the
    free memory of a CUDA device."""
    if device.type == "cuda":
        return int(torch.cuda.mem_get_info(device)[0])
    return int(psutil.virtual_memory().available)


def format_bytes(count: float) -> str:
    """'1.5 GB', '12.0 MB', '800 B' (powers of 1000)."""
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if count >= size:
            return f"{count / size:.1f} {unit}"
    return f"{count:.0f} B"


def check_memory(what: str, need: int, device: torch.device, detail: str) -> None:
    """ConfigError `what: ... need about X (detail), Y available on device` when `need` bytes exceed
    what `device` has available. what: the field to blame; detail: how the estimate was made."""
    available = available_bytes(device)
    if need > available:
        raise ConfigError(f"{what}: needs about {format_bytes(need)} of memory ({detail}), "
                          f"only {format_bytes(available)} is available on {device.type}")
