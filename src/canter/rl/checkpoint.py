"""Atomic checkpoint files: written to a temporary file in the same folder, then renamed over the
old one, so a crash mid-write leaves the previous checkpoint whole and loadable.

The temporary file is named `.<name>.<pid>.<random>.tmp`. A process killed mid-write (kill -9, power
loss) leaves it behind; `remove_stale_temps` deletes those whose writer is no longer alive.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import torch

from canter.core.errors import CanterError
from canter.core.files import atomic_write, remove_stale_scratch


def save_atomic(payload: dict[str, Any], path: str | Path) -> Path:
    """Write `payload` with torch.save to `path` atomically (canter.core.files.atomic_write); returns the path.

    A failed write removes its temporary file and leaves the previous file as it was. A full disk or
    any other OS error is a WriteError naming the file (a full disk with the bytes asked for).
    """
    path = Path(path)
    with atomic_write(path, needed=lambda: payload_bytes(payload), what="checkpoint") as tmp, open(tmp, "wb") as file:
        torch.save(payload, file)
        file.flush()
        os.fsync(file.fileno())
    return path


def payload_bytes(tree: Any) -> int:
    """Bytes of the tensors in a nested dict/list payload (what a checkpoint of it needs, roughly)."""
    if isinstance(tree, torch.Tensor):
        return tree.numel() * tree.element_size()
    if isinstance(tree, dict):
        return sum(payload_bytes(value) for value in tree.values())
    if isinstance(tree, (list, tuple)):
        return sum(payload_bytes(value) for value in tree)
    return 0


def remove_stale_temps(folder: str | Path, names: tuple[str, ...]) -> list[Path]:
    """Deletes the temporary files of interrupted atomic writes of `names` in `folder` whose writing
    process is gone (canter.core.files.remove_stale_scratch); returns what was removed."""
    return [tmp for name in names for tmp in remove_stale_scratch(Path(folder) / name)]


def load_checkpoint(path: str | Path, map_location: str | torch.device = "cpu", *, mmap: bool = False) -> dict[str, Any]:
    """Load a checkpoint; a missing or unreadable file raises CanterError naming it. mmap: map the
    tensors' storage instead of reading it (to look at shapes without reading a large file)."""
    path = Path(path)
    if not path.is_file():
        raise CanterError(f"no checkpoint at {path}")
    try:
        payload = torch.load(path, map_location=map_location, weights_only=False, mmap=mmap)
    except Exception as err:
        raise CanterError(f"corrupt checkpoint {path}: {type(err).__name__}: {' '.join(str(err).split())[:200]}") from err
    if not isinstance(payload, dict) or "algorithm" not in payload:
        raise CanterError(f"{path} is not a Canter checkpoint")
    return payload


def check_compatible(payload: dict[str, Any], path: str | Path, meta: dict[str, Any],
                     policy_state: dict[str, torch.Tensor]) -> None:
    """CanterError (one line) unless `payload` is a checkpoint of this run's task and policy shape.

    meta: this run's {"task", "observation_shapes", "num_actions"}; policy_state: its policy's
    state_dict, whose parameter names and shapes the checkpoint's must match.
    """
    saved = payload.get("meta") or {}
    theirs = payload["algorithm"]["policy"]
    differs = [key for key in sorted(set(theirs) | set(policy_state))
               if key not in theirs or key not in policy_state or theirs[key].shape != policy_state[key].shape]
    other_task = saved.get("task") and meta.get("task") and saved["task"] != meta["task"]
    if not differs and not other_task:
        return
    if saved and (other_task or _describe(saved) != _describe(meta)):
        raise CanterError(f"{path} is for {_describe(saved)}, this run is {_describe(meta)}")
    key = differs[0]  # the same task and shapes: another network
    shape = tuple(theirs[key].shape) if key in theirs else "absent"
    raise CanterError(f"{path} holds another policy: {key} is {shape} there, "
                      f"{tuple(policy_state[key].shape) if key in policy_state else 'absent'} here")


def _describe(meta: dict[str, Any]) -> str:
    """'task ant (obs 27, actions 8)' (observation groups other than "policy" named)."""
    shapes = meta.get("observation_shapes", {})
    obs = ", ".join(f"obs {'x'.join(map(str, shape))}" if group == "policy" else f"{group} {'x'.join(map(str, shape))}"
                    for group, shape in shapes.items())
    task = f"task {meta['task']}" if meta.get("task") else "an unnamed task"
    return f"{task} ({obs}, actions {meta.get('num_actions')})"
