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
peak instead of shrinking after a large temporary. It helps where large tensors come and go: CNN
updates, 1.08x Pong's and 1.03-1.18x the grasp student's training speed. On `dog-flat` (an MLP,
small tensors) it measured about 5 % slower (three pairs of 30-s runs), so `OnPolicyRunner` applies it only
to policies that learn from images. `CANTER_MALLOC`: "auto" (the default: that rule), "retain"
(always), "system" (never: glibc's defaults). Elsewhere than glibc (macOS, musl) it does nothing.
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


def heap_mode() -> str:
    """CANTER_MALLOC: "auto" (default), "retain" or "system"; ConfigError (one line) for anything else."""
    mode = os.environ.get(ENV, "auto").strip().lower()
    if mode not in ("auto", "retain", "system"):
        raise ConfigError(f"{ENV}={mode!r}: expected 'auto' (the default), 'retain' or 'system'")
    return mode


def retain_freed_memory(learns_from_images: bool = True) -> bool:
    """Switch glibc's malloc to keep freed pages (see the module doc) when CANTER_MALLOC asks for it:
    "retain" always, "auto" when `learns_from_images`. True when it took effect; False (nothing
    changed) otherwise, off Linux, or without glibc's mallopt."""
    mode = heap_mode()
    if mode == "system" or (mode == "auto" and not learns_from_images) or not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return bool(mallopt(M_MMAP_MAX, 0)) and bool(mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))
