"""MuJoCo's C warnings, counted instead of printed.

By default MuJoCo prints every warning (an unstable simulation: one per env and step) to stderr and
appends it to MUJOCO_LOG.TXT in the working directory. `collect()` installs a handler
(mujoco.set_mju_user_warning, process-wide; called from the batch's worker threads) that only counts
them by message, numbers elided; `take()` returns and clears the counts, for one summary line per
training iteration.
"""

from __future__ import annotations

import re
import threading
from collections import Counter

import mujoco

_NUMBER = re.compile(r"[-+]?\d+(\.\d+)?")
_lock = threading.Lock()
_counts: Counter[str] = Counter()


def _count(message: str) -> None:
    key = _NUMBER.sub("N", " ".join(message.split()))
    with _lock:
        _counts[key] += 1


def collect() -> None:
    """Route MuJoCo's warnings of this process into the counts (idempotent)."""
    if mujoco.get_mju_user_warning() is not _count:
        mujoco.set_mju_user_warning(_count)


def take() -> dict[str, int]:
    """The warnings counted since the last call, message -> count; clears them."""
    with _lock:
        counts = dict(_counts)
        _counts.clear()
    return counts


