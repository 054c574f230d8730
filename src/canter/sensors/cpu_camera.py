"""The cpu camera: every pixel of every env in one batched call, no OpenGL, no per-env Python loop.

Two paths compute the same images (tests hold them together):

- `kernel` (scenes of primitive geoms: planes, spheres, capsules, ellipsoids, cylinders, boxes):
  canter.sensors.raycast, a C kernel on plain threads that tests each geom only on the pixels its
  bounding sphere covers on screen. It reads the geom poses of the simulator's derived fields.
- `batch_ray` (any scene, e.g. with meshes; or CANTER_CAMERA_KERNEL=0): one
  `mujoco.batch.Batch.ray` call on MuJoCo's thread pool (mj_kinematics, then mj_ray per pixel
  against every geom). Rays leave each env's camera position along R_env @ d_pixel, d_pixel scaled
  to z = -1 (canter.sensors.camera_cfg.pixel_directions), so MuJoCo's distance is the planar depth.

Both cast against geoms of groups 0-2 (MuJoCo's renderers' default), static geoms included; the
hit normals feed the Lambert shading of canter.sensors.shading when RGB is asked for.
"""

from __future__ import annotations

import mujoco
import numpy as np
import torch

from canter.sensors import raycast
from canter.sensors.camera import Camera
from canter.sensors.camera_cfg import CameraCfg, pixel_directions
from canter.sensors.shading import active_light_ids, base_colors, model_lighting, shade, to_uint8
from canter.sim.cpu import CpuSimulator

# geom groups 0, 1 and 2: what MuJoCo's renderers show by default
_GEOMGROUP = np.array([1, 1, 1] + [0] * (mujoco.mjNGROUP - 3), dtype=np.uint8)


class CpuCamera(Camera):
    """Batched ray-cast camera on the cpu backend; tensors on the CPU. `path` names the route taken
    ('kernel' or 'batch_ray'; `use_kernel=False` forces the latter)."""

    def __init__(self, sim: CpuSimulator, cfg: CameraCfg, use_kernel: bool = True):
        super().__init__(sim, cfg)
        self.sim = sim
        model = sim.model
        self._cam_xpos = sim.field("cam_xpos")  # (N, ncam, 3) float64
        self._cam_xmat = sim.field("cam_xmat")  # (N, ncam, 9) float64
        visible = (model.geom_group <= 2) & (model.geom_rgba[:, 3] > 0)
        geoms = np.flatnonzero(visible).astype(np.int32)
        supported = all(int(t) in raycast.SUPPORTED for t in model.geom_type[geoms])
        self._lib = raycast.load() if use_kernel and supported else None
        self.path = "kernel" if self._lib is not None else "batch_ray"
        self._rgb = "rgb" in cfg.outputs
        if self._rgb:
            self._lighting = model_lighting(model, sim.device)
            self._light_ids = active_light_ids(model)
            self._light_xdir = sim.field("light_xdir")  # (N, nlight, 3)
            self._light_xpos = sim.field("light_xpos")
        pixels = self.height * self.width
        # pixel offsets from the image centre, in pixels (x right, y up): (P, 2)
        self._offsets = pixel_directions(90.0, self.width, self.height, torch.float64)[:, :2] * (
            0.5 * self.height
        )
        if self._lib is not None:
            self._geom_xpos = sim.field("geom_xpos")  # (N, ngeom, 3)
            self._geom_xmat = sim.field("geom_xmat")  # (N, ngeom, 9)
            self._geoms = torch.from_numpy(geoms)
            self._types = torch.from_numpy(model.geom_type[geoms].astype(np.int32))
            self._depth = self.outputs.get("depth", torch.empty(self.num_envs, 1, self.height, self.width))
            self._seg = self.outputs.get(
                "segmentation", torch.empty(self.num_envs, 1, self.height, self.width, dtype=torch.int32)
            )
            self._normal = torch.empty(self.num_envs, pixels, 3) if self._rgb else None
        unfilled = not bool(self._cam_xmat[:, self.cam_id].any())
        if self._lib is not None and geoms.size:
            unfilled |= not bool(self._geom_xmat[:, int(geoms[0])].any())
        if unfilled:
            # freshly bound fields are filled from the next call on (CpuSimulator.field); a rotation
            # matrix is never all zeros, so these have not been computed yet
            sim.forward()

    def render(self) -> dict[str, torch.Tensor]:
        if self._lib is not None:
            self._cast_kernel()  # shades too
        else:
            depth, geom, normal = self._cast_batch_ray()
            if self._rgb:
                assert normal is not None
                self.outputs["rgb"].copy_(self._shade(geom, normal, depth))
        return self.outputs

    def _colors(self) -> torch.Tensor:
        """(N or 1, ngeom + 1, 3) float32 base colors, per env when geom_rgba is expanded."""
        if self.sim.is_expanded("geom_rgba"):  # per-env colors (visual domain randomization)
            return base_colors(self.model, self.sim.expand("geom_rgba"))
        if not hasattr(self, "_shared_colors"):
            self._shared_colors = base_colors(self.model, torch.from_numpy(self.model.geom_rgba))[None]
        return self._shared_colors

    def _kernel_shading(self) -> tuple[raycast.Shading, list[torch.Tensor]]:
        """The kernel's shading arguments and the tensors they point into."""
        lighting, ids = self._lighting, self._light_ids
        if lighting.default_dir is not None:
            towards = (-lighting.default_dir).expand(self.num_envs, 1, 3)
        else:  # -direction of directional lights, position of the others
            directional = lighting.directional[None, :, None]
            towards = torch.where(directional, -self._light_xdir[:, ids], self._light_xpos[:, ids])
        keep = [
            self._colors().contiguous(),
            towards.float().contiguous(),
            lighting.directional.int().contiguous(),
            lighting.diffuse.contiguous(),
            lighting.ambient.contiguous(),
            self.outputs["rgb"],
        ]
        return raycast.shading_args(*keep), keep

    def _cast_kernel(self) -> None:
        sizes = self.sim.expand("geom_size") if self.sim.is_expanded("geom_size") else None
        if sizes is None:
            sizes = torch.from_numpy(self.model.geom_size)[None]
        types = self.model.geom_type[self._geoms.numpy()]
        rbound = raycast.bounding_radius(types, sizes[:, self._geoms.long()].numpy()).max(axis=0)
        shading, _keep = self._kernel_shading() if self._rgb else (None, [])
        raycast.raycast(
            self._lib,  # type: ignore[arg-type]
            focal=self.focal(),
            near=self.cfg.near,
            far=self.cfg.far,
            cam_pos=self._cam_xpos[:, self.cam_id],
            cam_mat=self._cam_xmat[:, self.cam_id],
            geom_pos=self._geom_xpos,
            geom_mat=self._geom_xmat,
            geom_size=sizes.contiguous(),
            geoms=self._geoms,
            types=self._types,
            rbound=torch.from_numpy(np.ascontiguousarray(rbound, dtype=np.float64)),
            depth=self._depth.view(self.num_envs, self.height, self.width),
            seg=self._seg.view(self.num_envs, self.height, self.width),
            normal=self._normal,
            shading=shading,
            threads=self.sim.num_threads,
        )

    def _cast_batch_ray(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        cfg = self.cfg
        self._world_rays()
        result = self.sim.batch.ray(
            self._pnt.numpy(), self._vec.numpy(), geomgroup=_GEOMGROUP, flg_static=True, normal=self._rgb
        )
        dist = torch.from_numpy(result[0])  # (N, P) planar depth, -1 for a miss
        miss = (dist < cfg.near) | (dist > cfg.far)
        depth = dist.masked_fill(miss, cfg.far).float()
        geom = torch.from_numpy(result[1]).masked_fill(miss, -1)  # (N, P) int32
        shape = (self.num_envs, 1, self.height, self.width)
        if "depth" in self.outputs:
            self.outputs["depth"].copy_(depth.view(shape))
        if "segmentation" in self.outputs:
            self.outputs["segmentation"].copy_(geom.view(shape))
        return depth, geom, torch.from_numpy(result[2]).float() if self._rgb else None

    def _world_rays(self) -> None:
        """Fill `_pnt` (N, 1, 3) with the camera positions and `_vec` (N, P, 3) with the world ray
        directions vec[n, p] = R_n @ d_p, i.e. vec[n] = D @ R_n^T with D = (P, 3) (allocated once)."""
        if not hasattr(self, "_vec"):
            self._vec = torch.empty(self.num_envs, self.height * self.width, 3, dtype=torch.float64)
            self._pnt = torch.empty(self.num_envs, 1, 3, dtype=torch.float64)
        focal = self.focal()
        if focal.numel() == 1:  # one field of view: d_p shared by all envs
            directions = torch.cat((self._offsets / focal, -torch.ones(self._offsets.shape[0], 1)), dim=1)
        else:  # (N, P, 3)
            xy = self._offsets / focal[:, None, None]
            directions = torch.cat((xy, -torch.ones(*xy.shape[:2], 1, dtype=xy.dtype)), dim=2)
        rotation = self._cam_xmat[:, self.cam_id].view(self.num_envs, 3, 3)
        torch.matmul(directions, rotation.transpose(1, 2), out=self._vec)
        self._pnt.copy_(self._cam_xpos[:, self.cam_id, None, :])

    def _shade(self, geom: torch.Tensor, normal: torch.Tensor, depth: torch.Tensor) -> torch.Tensor:
        """(N, 3, H, W) uint8 from per-pixel geom ids (N, P), normals (N, P, 3), depths (N, P)."""
        ngeom = self.model.ngeom
        index = torch.where(geom < 0, ngeom, geom).long()
        table = self._colors()
        if table.shape[0] > 1:
            index = index + torch.arange(self.num_envs).mul_(ngeom + 1)[:, None]
        color = table.reshape(-1, 3)[index]
        ids = self._light_ids
        light_dir = self._light_xdir[:, ids].float() if ids else None
        light_pos = self._light_xpos[:, ids].float() if ids else None
        hit = None
        if ids and not bool(self._lighting.directional.all()):
            self._world_rays()
            hit = (self._pnt + depth[..., None].double() * self._vec).float()
        rgb = shade(color, normal, self._lighting, light_dir, light_pos, hit)
        return to_uint8(rgb, self.height, self.width)
