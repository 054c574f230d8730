"""Camera configuration: which MJCF camera, the image size, the clipping range and the outputs.

Conventions shared by both backends (canter.sensors.cpu_camera, canter.sensors.warp_camera):

- Images are (num_envs, C, H, W); row 0 is the top of the image, column 0 its left, as seen by a
  MuJoCo camera (looking along its -z axis, x to the right, y up).
- Pixel (row i, column j) looks through the point ((j + 0.5 - W/2) / f, -(i + 0.5 - H/2) / f, -1) of
  the camera frame, f = (H/2) / tan(fovy/2) in pixels (MuJoCo's fovy is vertical; square pixels).
- depth: float32 metres along the camera's optical axis (planar depth, the z-buffer's distance,
  not the distance along the ray); pixels that hit nothing nearer than `far`, or whose nearest
  surface lies nearer than `near` (clipped away; nothing is seen behind it), read `far`.
- rgb: uint8, 3 channels. segmentation: int32 geom id, -1 where depth reads `far` (background).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import mujoco
import torch

from canter.core.errors import ConfigError

CameraOutput = Literal["depth", "rgb", "segmentation"]
OUTPUTS: tuple[str, ...] = ("depth", "rgb", "segmentation")
CHANNELS = {"depth": 1, "rgb": 3, "segmentation": 1}


@dataclass(kw_only=True)
class CameraCfg:
    """A camera declared against a camera of the MJCF model."""

    name: str  # the MJCF <camera name=...>
    width: int = 64  # pixels
    height: int = 64  # pixels
    near: float = 0.01  # metres along the optical axis; a nearer surface reads as a miss
    far: float = 10.0  # metres; misses and farther hits read `far`
    outputs: tuple[CameraOutput, ...] = ("depth",)

    def __post_init__(self) -> None:
        if not self.name:
            raise ConfigError("camera.name: must name a camera of the MJCF model")
        if self.width < 1 or self.height < 1:
            raise ConfigError(
                f"camera {self.name!r}: resolution must be >= 1 pixel, got {self.width}x{self.height}"
            )
        if not (0.0 <= self.near < self.far) or not math.isfinite(self.far):
            raise ConfigError(
                f"camera {self.name!r}: need 0 <= near < far < inf, got near={self.near}, far={self.far}"
            )
        if not self.outputs:
            raise ConfigError(f"camera {self.name!r}: outputs must name at least one of {', '.join(OUTPUTS)}")
        for output in self.outputs:
            if output not in OUTPUTS:
                raise ConfigError(
                    f"camera {self.name!r}: unknown output {output!r} (choose from {', '.join(OUTPUTS)})"
                )
        if len(set(self.outputs)) != len(self.outputs):
            raise ConfigError(f"camera {self.name!r}: outputs repeat an entry: {self.outputs}")


def camera_listing(model: mujoco.MjModel) -> str:
    """The model's camera names, comma-separated (`#i` for an unnamed one; "none" without cameras)."""
    names = [mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_CAMERA, i) or f"#{i}" for i in range(model.ncam)]
    return ", ".join(names) if names else "none"


def camera_id(model: mujoco.MjModel, cfg: CameraCfg) -> int:
    """The model's id of the camera `cfg.name`; a ConfigError naming the model's cameras if absent,
    or if the camera is not a plain perspective camera (orthographic and sensor-intrinsics cameras
    are not supported)."""
    cam = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_CAMERA, cfg.name)
    if cam < 0:
        raise ConfigError(f"camera: the model has no camera named {cfg.name!r} (its cameras: {camera_listing(model)})")
    if int(model.cam_projection[cam]) != int(mujoco.mjtProjection.mjPROJ_PERSPECTIVE):
        raise ConfigError(f"camera {cfg.name!r}: only perspective cameras are supported")
    if float(model.cam_sensorsize[cam, 1]) != 0.0:
        raise ConfigError(
            f"camera {cfg.name!r}: cameras given by sensor size/intrinsics are not supported; use fovy"
        )
    return int(cam)


def pixel_directions(fovy_deg: float, width: int, height: int, dtype: torch.dtype) -> torch.Tensor:
    """(H*W, 3) ray directions in the camera frame, row-major from the top-left pixel, scaled so
    that their z component is -1: a ray parameter t is then the planar depth of the point it reaches."""
    focal = 0.5 * height / math.tan(math.radians(fovy_deg) / 2)
    cols = (torch.arange(width, dtype=torch.float64) + 0.5 - width / 2) / focal
    rows = -(torch.arange(height, dtype=torch.float64) + 0.5 - height / 2) / focal
    y, x = torch.meshgrid(rows, cols, indexing="ij")
    directions = torch.stack((x, y, -torch.ones_like(x)), dim=-1).reshape(-1, 3)
    return directions.to(dtype)
