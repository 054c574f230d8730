"""Keep freed memory in the process for reuse, instead of handing every large block back to the kernel.

glibc's malloc serves each request above its mmap threshold (at most 32 MB, lower until a block of
that size has been freed) with a fresh mmap and unmaps it on free, so a tensor of that size allocated
again is faulted in page by page, zero-filled by the kernel, every time. A CPU training loop does
exactly that thousands of times per iteration: a minibatch of 780 RGB-D 64x64 frames is 51 MB of
float32, and its activations and gradients are more blocks of megabytes. Measured on the 2-core AMD
EPYC (BENCHMARKS.md §20): the wrist-camera CNN's forward and backward pass over one minibatch takes
127 ms with glibc's defaults and 90 ms with `retain_freed_memory()`; converting the uint8 batch to
float alone, 37 against 12 ms.

`retain_freed_memory()` sets, through glibc's `mallopt`: no mmap for single allocations (they come
from the heap, and their pages stay mapped when freed) and a trim threshold of 2 GB (free memory at
the top of the heap is returned only above that). The cost: the process's resident memory stays at its
peak instead of shrinking after a large temporary, which a training run does not do anyway. The
`canter` command calls it at start; `CANTER_MALLOC=system` keeps glibc's defaults (to compare, or
where a process must give memory back). Elsewhere than glibc (macOS, musl) it does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys

from canter.core.errors import ConfigError

M_TRIM_THRESHOLD = -1  # glibc's mallopt parameters (malloc.h)
M_MMAP_MAX = -4
TRIM_THRESHOLD = 2**31 - 1  # bytes: mallopt takes a C int
ENV = "CANTER_MALLOC"


def retain_freed_memory() -> bool:
    """Switch glibc's malloc to keep freed pages (see the module doc); True when it took effect.

    False (nothing changed) with CANTER_MALLOC=system, off Linux, or without glibc's mallopt."""
    mode = os.environ.get(ENV, "retain").strip().lower()
    if mode == "system" or not sys.platform.startswith("linux"):
        return False
    if mode != "retain":
        raise ConfigError(f"{ENV}={mode!r}: expected 'retain' (the default) or 'system'")
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return bool(mallopt(M_MMAP_MAX, 0)) and bool(mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))
