"""Atomic checkpoint files: written to a temporary file in the same folder, then renamed over the
old one, so a crash mid-write leaves the previous checkpoint whole and loadable."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import torch

from canter.core.errors import CanterError


def save_atomic(payload: dict[str, Any], path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as file:
            torch.save(payload, file)
            file.flush()
            os.fsync(file.fileno())
        os.replace(tmp_name, path)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise
    return path


def load_checkpoint(path: str | Path, map_location: str | torch.device = "cpu") -> dict[str, Any]:
    """Load a checkpoint; a missing or unreadable file raises CanterError naming it."""
    path = Path(path)
    if not path.is_file():
        raise CanterError(f"no checkpoint at {path}")
    try:
        payload = torch.load(path, map_location=map_location, weights_only=False)
    except Exception as err:
        raise CanterError(f"corrupt checkpoint {path}: {type(err).__name__}: {' '.join(str(err).split())[:200]}") from err
    if not isinstance(payload, dict) or "algorithm" not in payload:
        raise CanterError(f"{path} is not a Canter checkpoint")
    return payload
