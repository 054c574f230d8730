"""Explicit device handling: every component receives its device as an argument."""

from __future__ import annotations

import os

import torch

from canter.core.errors import ConfigError


def resolve_device(name: str) -> torch.device:
    """Turn 'cpu', 'cuda', 'cuda:1' or 'auto' into a torch.device, checking it exists."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        device = torch.device(name)
    except RuntimeError as err:
        raise ConfigError(f"device: unknown device {name!r} (use cpu, cuda, cuda:N or auto)") from err
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ConfigError(f"device: {name!r} requested but torch sees no CUDA device")
    return device


def available_cores() -> int:
    """Cores this process may run on (respects CPU affinity, unlike os.cpu_count)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1
