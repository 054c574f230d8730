"""The warp camera: MuJoCo Warp's batch renderer over the simulator's own Model and Data.

One render context per camera (only that MJCF camera active, geom groups 0-2, no textures, shadows
or specular highlights, black background). `render()` refits the scene BVH to the current geom
poses and launches MuJoCo Warp's render kernel for all worlds; the outputs are then read straight
from the context's buffers through zero-copy torch views (wp.to_torch): planar depth (MuJoCo Warp
writes 0 for a miss), (geom id, object type) pairs, and packed 0xAARRGGBB colors. Runs on CUDA and
on Warp's CPU device.
"""

from __future__ import annotations

import torch
import warp as wp

from canter.core.errors import ConfigError
from canter.sensors.camera import Camera
from canter.sensors.camera_cfg import CameraCfg
from canter.sim.warp import WarpSimulator, mjw


class WarpCamera(Camera):
    """MuJoCo Warp batch-rendered camera; tensors on the simulator's device."""

    def __init__(self, sim: WarpSimulator, cfg: CameraCfg):
        super().__init__(sim, cfg)
        self.sim = sim
        with sim.warp_scope():
            try:
                self.context = mjw.create_render_context(
                    sim.model,
                    nworld=sim.num_envs,
                    cam_res=(cfg.width, cfg.height),
                    render_rgb="rgb" in cfg.outputs,
                    render_depth=True,  # misses are told apart by depth
                    render_seg="segmentation" in cfg.outputs,
                    use_textures=False,
                    use_shadows=False,
                    enabled_geom_groups=[0, 1, 2],
                    cam_active=[self.cam_id],
                    background_color=(0.0, 0.0, 0.0, 1.0),
                    enable_specular=False,
                    use_precomputed_rays=False,  # rays from each world's cam_fovy (field of view DR)
                )
            except (NotImplementedError, ValueError) as err:
                message = " ".join(str(err).split())
                raise ConfigError(
                    f"camera {cfg.name!r}: MuJoCo Warp cannot render this model: {message}"
                ) from err
        pixels = cfg.width * cfg.height
        context = self.context
        start = int(context.depth_adr.numpy()[0])
        self._depth = wp.to_torch(context.depth_data)[:, start : start + pixels]  # (N, P) float32
        self._seg = None
        self._rgb = None
        if "segmentation" in cfg.outputs:
            start = int(context.seg_adr.numpy()[0])
            self._seg = wp.to_torch(context.seg_data)[:, start : start + pixels, 0]  # (N, P) int32
        if "rgb" in cfg.outputs:
            start = int(context.rgb_adr.numpy()[0])
            packed = wp.to_torch(context.rgb_data)[:, start : start + pixels]  # (N, P) 0xAARRGGBB
            self._rgb = packed.view(torch.uint8).view(sim.num_envs, pixels, 4)  # little endian: B, G, R, A

    def render(self) -> dict[str, torch.Tensor]:
        cfg = self.cfg
        with self.sim.warp_scope():
            mjw.refit_bvh(self.sim.mjw_model, self.sim.mjw_data, self.context)
            mjw.render(self.sim.mjw_model, self.sim.mjw_data, self.context)
        shape = (self.num_envs, 1, self.height, self.width)
        miss = (self._depth <= 0.0) | (self._depth < cfg.near) | (self._depth > cfg.far)
        if "depth" in self.outputs:
            self.outputs["depth"].copy_(self._depth.masked_fill(miss, cfg.far).view(shape))
        if self._seg is not None:
            self.outputs["segmentation"].copy_(self._seg.masked_fill(miss, -1).view(shape))
        if self._rgb is not None:
            bgr = self._rgb[..., :3].masked_fill(miss[..., None], 0)
            rgb = bgr.flip(-1).transpose(1, 2).reshape(self.num_envs, 3, self.height, self.width)
            self.outputs["rgb"].copy_(rgb)
        return self.outputs
