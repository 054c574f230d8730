"""Facts every benchmark report carries: hardware, versions, commit."""

from __future__ import annotations

import platform
import subprocess
from pathlib import Path

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
