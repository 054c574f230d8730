"""The camera interface both backends implement, and the factory that picks one for a simulator.

A camera renders one MJCF camera of every env at the simulator's current state into
(num_envs, C, H, W) tensors on the simulator's device; see canter.sensors.camera_cfg for the pixel,
depth and segmentation conventions. Output tensors are buffers the camera reuses: each `render()`
overwrites them, so clone what must outlive the next call.

Poses: the cameras read the camera frame, and the warp camera and the cpu kernel also the geom
poses, from the simulator's derived fields (cam_xpos/xmat, geom_xpos/xmat), which follow
`SimCfg.sensor_stage`: with "lagged" (the default) the image shows the scene one physics substep
before the state (the cpu camera's Batch.ray path places geoms at the state itself); use "current"
where that substep matters (a fast wrist camera). Fixed cameras and resting objects are unaffected.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import mujoco
import torch

from canter.core.errors import ConfigError
from canter.core.memory import check_memory
from canter.sensors.camera_cfg import CHANNELS, CameraCfg, camera_id
from canter.sim.backend import Simulator

# the renderers' own buffers per pixel of every env besides the outputs (the cpu camera's ray
# directions, hit distances, geom ids and normals; the bound the memory check adds to the outputs)
WORK_BYTES_PER_PIXEL = 32


class Camera(ABC):
    """A batch of `num_envs` images of one MJCF camera."""

    cfg: CameraCfg
    model: mujoco.MjModel
    cam_id: int
    num_envs: int
    device: torch.device
    outputs: dict[str, torch.Tensor]  # output name -> (num_envs, C, H, W) buffer

    def __init__(self, sim: Simulator, cfg: CameraCfg):
        self.cfg = cfg
        self.model = sim.model
        self.cam_id = camera_id(sim.model, cfg)
        self.num_envs = sim.num_envs
        self.device = sim.device
        self.height = cfg.height
        self.width = cfg.width
        self._simulator = sim
        dtypes = {"depth": torch.float32, "rgb": torch.uint8, "segmentation": torch.int32}
        per_pixel = sum(CHANNELS[name] * dtypes[name].itemsize for name in cfg.outputs) + WORK_BYTES_PER_PIXEL
        pixels = self.num_envs * self.height * self.width
        check_memory(f"camera {cfg.name!r}", pixels * per_pixel, self.device,
                     f"{self.num_envs:,} envs x {self.height}x{self.width} pixels x ~{per_pixel} bytes")
        self.outputs = {
            name: torch.zeros(
                self.num_envs, CHANNELS[name], self.height, self.width, dtype=dtypes[name], device=self.device
            )
            for name in cfg.outputs
        }

    def fovy(self) -> torch.Tensor:
        """(N,) per-env vertical fields of view in degrees where `cam_fovy` was expanded (field of
        view randomization), else (1,) the model's; float64 on the CPU."""
        if self._simulator.is_expanded("cam_fovy"):
            return self._simulator.expand("cam_fovy")[:, self.cam_id].to("cpu", torch.float64)
        return torch.tensor([float(self.model.cam_fovy[self.cam_id])], dtype=torch.float64)

    def focal(self) -> torch.Tensor:
        """(N,) or (1,) focal lengths in pixels, (H/2) / tan(fovy/2), float64 on the CPU."""
        return (0.5 * self.height) / torch.tan(torch.deg2rad(self.fovy()) / 2)

    @abstractmethod
    def render(self) -> dict[str, torch.Tensor]:
        """Render every env at its current state; returns `outputs`, refilled: depth (N, 1, H, W)
        float32 metres, rgb (N, 3, H, W) uint8, segmentation (N, 1, H, W) int32 geom ids (-1: none)."""

    def output(self, name: str) -> torch.Tensor:
        """The buffer of one output (as of the last render)."""
        if name not in self.outputs:
            raise ConfigError(
                f"camera {self.cfg.name!r}: output {name!r} is not rendered (outputs: {', '.join(self.outputs)})"
            )
        return self.outputs[name]


def make_camera(sim: Simulator, cfg: CameraCfg) -> Camera:
    """The camera for `sim`'s backend: batched ray casting on cpu, MuJoCo Warp's renderer on warp."""
    from canter.sim.cpu import CpuSimulator

    if isinstance(sim, CpuSimulator):
        from canter.sensors.cpu_camera import CpuCamera

        return CpuCamera(sim, cfg)
    from canter.sensors.warp_camera import WarpCamera
    from canter.sim.warp import WarpSimulator

    if not isinstance(sim, WarpSimulator):
        raise ConfigError(f"camera {cfg.name!r}: no camera for simulator {type(sim).__name__}")
    return WarpCamera(sim, cfg)
