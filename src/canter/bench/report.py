"""Facts every benchmark report carries: hardware, versions, commit."""

from __future__ import annotations

import dataclasses
import platform
import statistics
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mujoco
import torch

import canter
from canter.core.device import available_cores


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def git_commit() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            cwd=Path(__file__).resolve().parent,
        )
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def machine_info() -> dict[str, object]:
    return {
        "cpu": _cpu_model(),
        "cores": available_cores(),
        "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
        "python": platform.python_version(),
        "torch": torch.__version__,
        "mujoco": mujoco.__version__,
        "canter": canter.__version__,
        "commit": git_commit(),
    }


@dataclass(kw_only=True)
class Spread:
    """Median, min and max of a figure over repetitions; in JSON: KEY, KEY_min, KEY_max."""

    median: float
    min: float
    max: float

    @classmethod
    def of(cls, values: list[float]) -> Spread:
        return cls(median=statistics.median(values), min=min(values), max=max(values))


def flat_json(result: Any) -> dict[str, Any]:
    """A typed result as the flat JSON of the reports: a Spread field KEY becomes KEY, KEY_min and
    KEY_max; a field named `machine` holding a dict is merged at the top level (machine_info())."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(result):
        value = getattr(result, f.name)
        if isinstance(value, Spread):
            out.update({f.name: value.median, f"{f.name}_min": value.min, f"{f.name}_max": value.max})
        elif f.name == "machine" and isinstance(value, dict):
            out.update(value)
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            out[f.name] = dataclasses.asdict(value)
        else:
            out[f.name] = value
    return out
