"""The fused CPU kernel of the interior-point `solve` (ipm_kernel.c): built on first use with the
system's C compiler, cached, and called through ctypes on the tensors' memory.

Eager torch runs the ~130 small ops of one Mehrotra iteration one after another over the whole
batch, so on a CPU the 12-variable GRF problem is bound by memory traffic and op dispatch; the
kernel runs the whole solve for 16 problems side by side in SIMD lanes, groups of them on OpenMP
threads (BENCHMARKS.md §8: 15x the torch path). It computes the same iterates as `ipm_step` to
round-off, and is used for float CPU tensors when it builds; otherwise (no compiler, other
devices) the torch path runs.

The library is cached under $CANTER_CACHE (default ~/.cache/canter) by a hash of the source, the
flags, the compiler and the CPU, written atomically, so concurrent processes (torchrun ranks) can race
to build it safely. CANTER_QP_KERNEL=0 disables it.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import platform
import shutil
import subprocess
import tempfile
import threading
import warnings
from pathlib import Path

import torch

SOURCE = Path(__file__).with_name("ipm_kernel.c")
FLAGS = ("-O3", "-march=native", "-fopenmp", "-fno-math-errno", "-fno-trapping-math", "-shared", "-fPIC", "-std=c11")
_REAL = {torch.float64: "double", torch.float32: "float"}
_lock = threading.Lock()
_libs: dict[torch.dtype, ctypes.CDLL | None] = {}


def _cache_dir() -> Path:
    root = os.environ.get("CANTER_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "canter")
    return Path(root) / "kernels"


def _compiler() -> str | None:
    return os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")


def _cpu() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            return next((line for line in f if line.startswith(("flags", "Features"))), "")
    except OSError:
        return platform.processor() or platform.machine()


def _build(dtype: torch.dtype) -> ctypes.CDLL:
    compiler = _compiler()
    if compiler is None:
        raise RuntimeError("no C compiler found (set CC)")
    flags = (*FLAGS, f"-Dreal={_REAL[dtype]}")
    version = subprocess.run([compiler, "--version"], capture_output=True, text=True, check=False).stdout
    # -march=native: the CPU is part of the key (a shared home directory may serve other machines)
    key = hashlib.sha256("\0".join((SOURCE.read_text(), *flags, compiler, version, _cpu())).encode()).hexdigest()[:16]
    path = _cache_dir() / f"qp_ipm_{_REAL[dtype]}_{key}.so"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(suffix=".so", dir=path.parent)
        os.close(fd)
        try:
            result = subprocess.run([compiler, *flags, str(SOURCE), "-o", tmp], capture_output=True, text=True, check=False)
            if result.returncode != 0:
                raise RuntimeError(f"{compiler} failed: {result.stderr.strip().splitlines()[-1:]}")
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    lib = ctypes.CDLL(str(path))
    real_p, i64, i32 = ctypes.c_void_p, ctypes.c_int64, ctypes.c_int
    real = ctypes.c_double if dtype == torch.float64 else ctypes.c_float
    lib.canter_qp_solve.restype = i32
    lib.canter_qp_solve.argtypes = [i64, i32, i32, *[real_p] * 3, i32, *[real_p] * 4, i32, i32, *[real] * 6,
                                    *[real_p] * 5, i32]
    return lib


def load(dtype: torch.dtype) -> ctypes.CDLL | None:
    """The kernel library for `dtype` (float32/float64), building it on first use; None when it is
    disabled or cannot be built (a warning says why, once)."""
    if dtype not in _REAL or os.environ.get("CANTER_QP_KERNEL", "1") == "0":
        return None
    with _lock:
        if dtype not in _libs:
            try:
                _libs[dtype] = _build(dtype)
            except (OSError, RuntimeError, subprocess.SubprocessError) as error:
                warnings.warn(f"canter.control.qp: fused CPU kernel unavailable ({error}); using the torch path",
                              RuntimeWarning, stacklevel=3)
                _libs[dtype] = None
        return _libs[dtype]


def available(tensor: torch.Tensor) -> bool:
    """Whether the kernel can run on this tensor's device and dtype."""
    return tensor.device.type == "cpu" and load(tensor.dtype) is not None


def solve(P, q, A, l, u, x0, y0, iterations: int, passes: int, regularization: float, eq_gap: float,
          eps_abs: float, eps_rel: float, eps_inf: float):
    """The whole interior-point `solve` in the kernel (validation, Ruiz scaling, set-up, iterations,
    best iterate, unscaling, residuals, certificates, status): x, y, status, primal and dual
    residuals, with the meaning `qp.solve` gives them."""
    lib = load(P.dtype)
    assert lib is not None
    shared = A.shape[0] > 0 and A.stride(0) == 0
    rows = (A[0] if shared else A).contiguous()
    P, q, l, u = (t.contiguous() for t in (P, q, l, u))
    x0 = None if x0 is None else x0.to(P).contiguous()
    y0 = None if y0 is None else y0.to(P).contiguous()
    batch, n, m = P.shape[0], P.shape[1], l.shape[1]
    x, y = torch.empty_like(q), torch.empty_like(l)
    status = torch.empty(batch, dtype=torch.int64)
    prim, dual = torch.empty(batch, dtype=P.dtype), torch.empty(batch, dtype=P.dtype)
    tol = 100 * torch.finfo(P.dtype).eps
    failed = lib.canter_qp_solve(
        batch, n, m, P.data_ptr(), q.data_ptr(), rows.data_ptr(), int(shared), l.data_ptr(), u.data_ptr(),
        None if x0 is None else x0.data_ptr(), None if y0 is None else y0.data_ptr(), iterations, passes,
        regularization, tol, eq_gap, eps_abs, eps_rel, eps_inf, x.data_ptr(), y.data_ptr(), status.data_ptr(),
        prim.data_ptr(), dual.data_ptr(), torch.get_num_threads(),
    )
    if failed:
        raise MemoryError("canter.control.qp: the fused kernel could not allocate its work space")
    return x, y, status, prim, dual
