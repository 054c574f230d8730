"""The cpu camera: every pixel of every env in one `mujoco.batch.Batch.ray` call.

Rays leave each env's camera position along R_env @ d_pixel, with d_pixel the camera-frame direction
scaled to z = -1 (canter.sensors.camera_cfg.pixel_directions), so the distance MuJoCo returns is the
planar depth directly. MuJoCo's thread pool casts them (mj_ray per ray against the geoms of groups
0-2, static geoms included, like the default renderer); depth and the geom id of each pixel come
from that call, its surface normals feed the Lambert shading of canter.sensors.shading for RGB.
No OpenGL, no per-env loop.
"""

from __future__ import annotations

import mujoco
import numpy as np
import torch

from canter.sensors.camera import Camera
from canter.sensors.camera_cfg import CameraCfg, pixel_directions
from canter.sensors.shading import active_light_ids, base_colors, model_lighting, shade, to_uint8
from canter.sim.cpu import CpuSimulator

# geom groups 0, 1 and 2: what MuJoCo's renderers show by default
_GEOMGROUP = np.array([1, 1, 1] + [0] * (mujoco.mjNGROUP - 3), dtype=np.uint8)


class CpuCamera(Camera):
    """Batched ray-cast camera on the cpu backend; tensors on the CPU."""

    def __init__(self, sim: CpuSimulator, cfg: CameraCfg):
        super().__init__(sim, cfg)
        self.sim = sim
        self._batch = sim.batch
        self._cam_xpos = sim.field("cam_xpos")  # (N, ncam, 3) float64
        self._cam_xmat = sim.field("cam_xmat")  # (N, ncam, 9) float64
        self._rgb = "rgb" in cfg.outputs
        if self._rgb:
            self._lighting = model_lighting(sim.model, sim.device)
            self._light_ids = active_light_ids(sim.model)
            self._light_xdir = sim.field("light_xdir")  # (N, nlight, 3)
            self._light_xpos = sim.field("light_xpos")
        if not bool(self._cam_xmat[:, self.cam_id].any()):
            # freshly bound fields are filled from the next call on (CpuSimulator.field); a rotation
            # matrix is never all zeros, so this one has not been computed yet
            sim.forward()
        pixels = self.height * self.width
        self._directions = pixel_directions(self.fovy, self.width, self.height, torch.float64)  # (P, 3)
        self._vec = torch.empty(self.num_envs, pixels, 3, dtype=torch.float64)  # world ray directions
        self._pnt = torch.empty(self.num_envs, 1, 3, dtype=torch.float64)  # ray origins
        self._vec_np = self._vec.numpy()
        self._pnt_np = self._pnt.numpy()

    def render(self) -> dict[str, torch.Tensor]:
        cfg = self.cfg
        rotation = self._cam_xmat[:, self.cam_id].view(self.num_envs, 3, 3)
        # vec[n, p] = R_n @ d_p, i.e. vec[n] = D @ R_n^T with D = (P, 3)
        torch.matmul(self._directions, rotation.transpose(1, 2), out=self._vec)
        self._pnt.copy_(self._cam_xpos[:, self.cam_id, None, :])
        result = self._batch.ray(
            self._pnt_np, self._vec_np, geomgroup=_GEOMGROUP, flg_static=True, normal=self._rgb
        )
        dist = torch.from_numpy(result[0])  # (N, P) planar depth, -1 for a miss
        geom = torch.from_numpy(result[1])  # (N, P) int32, -1 for a miss
        miss = (dist < cfg.near) | (dist > cfg.far)
        shape = (self.num_envs, 1, self.height, self.width)
        if "depth" in self.outputs:
            self.outputs["depth"].copy_(dist.masked_fill(miss, cfg.far).view(shape))
        geom = geom.masked_fill(miss, -1)
        if "segmentation" in self.outputs:
            self.outputs["segmentation"].copy_(geom.view(shape))
        if self._rgb:
            self.outputs["rgb"].copy_(self._shade(geom, torch.from_numpy(result[2]), dist))
        return self.outputs

    def _shade(self, geom: torch.Tensor, normal: torch.Tensor, dist: torch.Tensor) -> torch.Tensor:
        """(N, 3, H, W) uint8 from per-pixel geom ids (N, P), normals (N, P, 3), depths (N, P)."""
        ngeom = self.model.ngeom
        index = torch.where(geom < 0, ngeom, geom).long()
        if self.sim.is_expanded("geom_rgba"):  # per-env colors (visual domain randomization)
            table = base_colors(self.model, self.sim.expand("geom_rgba"))  # (N, ngeom + 1, 3)
            offsets = torch.arange(self.num_envs).mul_(ngeom + 1)[:, None]
            color = table.reshape(-1, 3)[index + offsets]
        else:
            color = base_colors(self.model, torch.from_numpy(self.model.geom_rgba))[index]
        ids = self._light_ids
        light_dir = self._light_xdir[:, ids].float() if ids else None
        light_pos = self._light_xpos[:, ids].float() if ids else None
        hit = None
        if ids and not bool(self._lighting.directional.all()):
            hit = (self._pnt + dist[..., None] * self._vec).float()
        rgb = shade(color, normal.float(), self._lighting, light_dir, light_pos, hit)
        return to_uint8(rgb, self.height, self.width)
