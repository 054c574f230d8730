"""The cpu camera's fast path: raycast_kernel.c, built on first use with the system's C compiler,
cached, and called through ctypes on the tensors' memory (the same scheme as the QP kernel,
canter.control.qp.kernel), on plain threads (envs taken from an atomic counter).

The kernel intersects each env's pixel rays with MuJoCo's primitive geoms itself, testing each geom
only on the pixels its bounding sphere covers on screen (a rasterizer of analytic primitives), so
its cost scales with the pixels each object covers instead of pixels × geoms. It reads the geom and
camera poses of the simulator's derived fields (geom_xpos/xmat, cam_xpos/xmat), which follow
SimCfg.sensor_stage like the warp camera's. Scenes with other geom types (meshes, height fields,
SDFs) use `Batch.ray` instead. CANTER_CAMERA_KERNEL=0 disables the kernel.
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

import mujoco
import numpy as np
import torch

SOURCE = Path(__file__).with_name("raycast_kernel.c")
FLAGS = (
    "-O3",
    "-march=native",
    "-fopenmp",
    "-fno-math-errno",
    "-fno-trapping-math",
    "-shared",
    "-fPIC",
    "-std=c11",
)
SUPPORTED = frozenset(
    int(t)
    for t in (
        mujoco.mjtGeom.mjGEOM_PLANE,
        mujoco.mjtGeom.mjGEOM_SPHERE,
        mujoco.mjtGeom.mjGEOM_CAPSULE,
        mujoco.mjtGeom.mjGEOM_ELLIPSOID,
        mujoco.mjtGeom.mjGEOM_CYLINDER,
        mujoco.mjtGeom.mjGEOM_BOX,
    )
)


class Shading(ctypes.Structure):
    """The kernel's shade_t: Lambert shading of the hits into (N, 3, H, W) uint8 (see shading.py)."""

    _fields_ = [
        ("colors", ctypes.c_void_p),  # (N or 1, ngeom + 1, 3) float32, last row the background
        ("color_stride", ctypes.c_int64),  # floats between envs' tables (0: shared)
        ("nlight", ctypes.c_int),
        ("light_vec", ctypes.c_void_p),  # (N, L, 3) float32: towards a directional light / a position
        ("directional", ctypes.c_void_p),  # (L,) int32
        ("diffuse", ctypes.c_void_p),  # (L, 3) float32
        ("ambient", ctypes.c_void_p),  # (3,) float32
        ("rgb", ctypes.c_void_p),  # (N, 3, H, W) uint8 output
    ]


def shading_args(
    colors: torch.Tensor,
    light_vec: torch.Tensor,
    directional: torch.Tensor,
    diffuse: torch.Tensor,
    ambient: torch.Tensor,
    rgb: torch.Tensor,
) -> Shading:
    """The kernel's shading arguments over contiguous tensors (keep them alive during the call)."""
    for t, dtype in ((colors, torch.float32), (light_vec, torch.float32), (directional, torch.int32),
                     (diffuse, torch.float32), (ambient, torch.float32), (rgb, torch.uint8)):  # fmt: skip
        assert t.dtype == dtype and t.is_contiguous()
    return Shading(
        colors.data_ptr(),
        colors[0].numel() if colors.shape[0] > 1 else 0,
        directional.numel(),
        light_vec.data_ptr(),
        directional.data_ptr(),
        diffuse.data_ptr(),
        ambient.data_ptr(),
        rgb.data_ptr(),
    )


_lock = threading.Lock()
_lib: list[ctypes.CDLL | None] = []


def _build() -> ctypes.CDLL:
    compiler = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if compiler is None:
        raise RuntimeError("no C compiler found (set CC)")
    version = subprocess.run([compiler, "--version"], capture_output=True, text=True, check=False).stdout
    try:
        cpu = next(
            (
                x
                for x in Path("/proc/cpuinfo").read_text().splitlines()
                if x.startswith(("flags", "Features"))
            ),
            "",
        )
    except OSError:
        cpu = platform.processor() or platform.machine()
    key = hashlib.sha256(
        "\0".join((SOURCE.read_text(), *FLAGS, compiler, version, cpu)).encode()
    ).hexdigest()[:16]
    root = os.environ.get("CANTER_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "canter")
    path = Path(root) / "kernels" / f"camera_raycast_{key}.so"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(suffix=".so", dir=path.parent)
        os.close(fd)
        try:
            result = subprocess.run(
                [compiler, *FLAGS, str(SOURCE), "-o", tmp], capture_output=True, text=True
            )
            if result.returncode != 0:
                raise RuntimeError(f"{compiler} failed: {result.stderr.strip().splitlines()[-1:]}")
            os.replace(tmp, path)  # atomic: concurrent builders race safely
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    lib = ctypes.CDLL(str(path))
    ptr, i64, i32, f64 = ctypes.c_void_p, ctypes.c_int64, ctypes.c_int, ctypes.c_double
    lib.canter_raycast.restype = None
    lib.canter_raycast.argtypes = [i64, i32, i32, ptr, i64, f64, f64, ptr, ptr, i64, i64, ptr, ptr, i32, ptr, i64, i32,
                                   ptr, ptr, ptr, ptr, ptr, ptr, ctypes.POINTER(Shading), i32]  # fmt: skip
    return lib


def load() -> ctypes.CDLL | None:
    """The kernel library, built on first use; None when disabled or unbuildable (warns once)."""
    if os.environ.get("CANTER_CAMERA_KERNEL", "1") == "0":
        return None
    with _lock:
        if not _lib:
            try:
                _lib.append(_build())
            except (OSError, RuntimeError, subprocess.SubprocessError) as error:
                warnings.warn(
                    f"canter.sensors: camera ray-casting kernel unavailable ({error}); using Batch.ray",
                    RuntimeWarning,
                    stacklevel=3,
                )
                _lib.append(None)
        return _lib[0]


def bounding_radius(types: np.ndarray, size: np.ndarray) -> np.ndarray:
    """(..., G) radius of the sphere about each geom's centre that holds it, from (..., G, 3) sizes
    (planes: 0, they are tested on every pixel)."""
    r, h = size[..., 0], size[..., 1]
    radius = np.linalg.norm(size, axis=-1)  # box (and ellipsoid: a safe over-estimate)
    radius = np.where(types == int(mujoco.mjtGeom.mjGEOM_SPHERE), r, radius)
    radius = np.where(types == int(mujoco.mjtGeom.mjGEOM_CAPSULE), r + h, radius)
    radius = np.where(types == int(mujoco.mjtGeom.mjGEOM_CYLINDER), np.hypot(r, h), radius)
    return np.where(types == int(mujoco.mjtGeom.mjGEOM_PLANE), 0.0, radius)


def raycast(
    lib: ctypes.CDLL,
    *,
    focal: torch.Tensor,
    near: float,
    far: float,
    cam_pos: torch.Tensor,
    cam_mat: torch.Tensor,
    geom_pos: torch.Tensor,
    geom_mat: torch.Tensor,
    geom_size: torch.Tensor,
    geoms: torch.Tensor,
    types: torch.Tensor,
    rbound: torch.Tensor,
    depth: torch.Tensor,
    seg: torch.Tensor,
    normal: torch.Tensor | None,
    shading: Shading | None,
    threads: int,
) -> None:
    """Fill depth (N, H, W) float32, seg (N, H, W) int32 and normal (N, H, W, 3) float32 (optional).

    focal (N,) or (1,) float64 focal lengths in pixels, (H/2) / tan(fovy/2);
    cam_pos (N, 3) / cam_mat (N, 9) float64 with any row stride (a camera's slice of cam_xpos /
    cam_xmat); geom_pos (N, ngeom, 3), geom_mat (N, ngeom, 9) float64 contiguous; geom_size
    (N or 1, ngeom, 3) float64 contiguous; geoms (G,) int32 ids to render with types (G,) int32 and
    bounding radii rbound (G,) float64; shading (needs normal): also shade the hits into RGB."""
    num_envs, height, width = depth.shape
    for t in (cam_pos, cam_mat):
        assert t.dtype == torch.float64 and t.stride(1) == 1
    assert focal.dtype == torch.float64
    for t in (focal, geom_pos, geom_mat, geom_size, depth, seg, geoms, types, rbound):
        assert t.is_contiguous()
    lib.canter_raycast(
        num_envs, width, height, focal.data_ptr(), 1 if focal.numel() > 1 else 0, near, far,
        cam_pos.data_ptr(), cam_mat.data_ptr(), cam_pos.stride(0), cam_mat.stride(0),
        geom_pos.data_ptr(), geom_mat.data_ptr(), geom_pos.shape[1], geom_size.data_ptr(),
        geom_size.stride(0) if geom_size.shape[0] > 1 else 0, geoms.numel(), geoms.data_ptr(), types.data_ptr(),
        rbound.data_ptr(), depth.data_ptr(), seg.data_ptr(), None if normal is None else normal.data_ptr(),
        None if shading is None else ctypes.byref(shading), threads,
    )  # fmt: skip
