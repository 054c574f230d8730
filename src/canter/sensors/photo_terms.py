"""A camera's RGB image with sim-real composition and image-space randomization (seed 002):

    ObsTermCfg(func=PhotoCameraImage, params={"camera": CameraCfg(name="wrist", outputs=("rgb", "segmentation")),
                                              "photos": "train", "surfaces": ("table",)},
               noise=unoise(8.0))            # pixel noise, in 0..255 units

At every episode start each env draws a background photo and a surface photo (from the bank named by
`photos`: "train", "unseen" or a folder of the user's own), a crop offset in each, whether this
episode is composed at all (`photo_probability`) and a brightness factor. Pixels that show no geometry
take the background photo's crop; pixels of the `surfaces` geoms (the table top) take the surface
photo's crop, as if the rendered objects had been pasted on a real scene; then the whole image is
scaled by the brightness factor. The draws come from the env's generator and are part of the env's
checkpoint (the term is stateful), so a resumed run composes the same images.

With `depth_range=(near, far)` (metres; the camera must render depth too) the image gets a fourth
channel, the planar depth quantized to uint8: round(255 (clamp(depth, near, far) - near) / (far - near)),
so 0 at `near` or closer and 255 at `far` or beyond (the background). Photos and brightness touch
only the color channels: the depth shows the geometry whatever the table looks like (a red sphere on a
red photograph is plain in depth). The observation's pixel noise applies to all four channels.

With `photo_recolor=True` each env also draws, per episode and for each of its two photos, an order
of the three color channels (one of the six) and a gain per channel (uniform in `recolor_gain_range`):
the photo pixels become gain_c * photo[order_c] (then the brightness). Nine photos then cover tables
of every hue, the sphere's red among them, in training. It is training-time randomization:
`canter eval/play --photos` show photos as they are (it is switched off).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch

from canter.core import selection
from canter.core.errors import ConfigError
from canter.managers.term import ManagerTerm, TermCfg
from canter.sensors.camera_cfg import CameraCfg
from canter.sensors.photos import PhotoBank, crops
from canter.sensors.terms import env_camera, rendered

if TYPE_CHECKING:
    from canter.envs.manager_env import ManagerBasedRLEnv


class PhotoCameraImage(ManagerTerm):
    """Observation term: (num_envs, 3, H, W) uint8 RGB composed over real photos, or (num_envs, 4, H, W)
    RGB + quantized depth with `depth_range` (module doc)."""

    def __init__(self, cfg: TermCfg, env: ManagerBasedRLEnv):
        super().__init__(cfg, env)
        params: dict[str, Any] = cfg.params
        camera_cfg: CameraCfg = params["camera"]
        if not {"rgb", "segmentation"} <= set(camera_cfg.outputs):
            raise ConfigError(f"PhotoCameraImage: camera {camera_cfg.name!r} must render rgb and segmentation "
                              f"(outputs: {camera_cfg.outputs})")
        depth_range = params.get("depth_range")
        self.depth_range: tuple[float, float] | None = None
        if depth_range is not None:
            near, far = (float(v) for v in depth_range)
            if not 0.0 <= near < far:
                raise ConfigError(f"PhotoCameraImage: depth_range must satisfy 0 <= near < far, got {tuple(depth_range)}")
            if "depth" not in camera_cfg.outputs:
                raise ConfigError(f"PhotoCameraImage: depth_range needs camera {camera_cfg.name!r} to render depth "
                                  f"(outputs: {camera_cfg.outputs})")
            self.depth_range = (near, far)
        self.camera = env_camera(env, camera_cfg)
        self.height, self.width = camera_cfg.height, camera_cfg.width
        size = max(int(params.get("photo_size", 96)), self.height, self.width)
        self.bank = PhotoBank(str(params.get("photos", "train")), size, env.device)
        model = env.sim.model
        surfaces = tuple(params.get("surfaces", ()))
        try:
            self.surface_ids = [model.geom(name).id for name in surfaces]
        except KeyError as err:
            raise ConfigError(f"PhotoCameraImage: surfaces {surfaces} name a geom the model lacks") from err
        low, high = params.get("brightness_range", (0.7, 1.3))
        if not 0 < low <= high:
            raise ConfigError(f"PhotoCameraImage: brightness_range must satisfy 0 < low <= high, got {(low, high)}")
        probability = float(params.get("photo_probability", 1.0))
        if not 0.0 <= probability <= 1.0:
            raise ConfigError(f"PhotoCameraImage: photo_probability must lie in [0, 1], got {probability}")
        self.brightness_range, self.probability = (float(low), float(high)), probability
        self.recolor = bool(params.get("photo_recolor", False))
        gain_low, gain_high = params.get("recolor_gain_range", (0.6, 1.4))
        if not 0 < gain_low <= gain_high:
            raise ConfigError(f"PhotoCameraImage: recolor_gain_range must satisfy 0 < low <= high, "
                              f"got {(gain_low, gain_high)}")
        self.recolor_gain_range = (float(gain_low), float(gain_high))
        n = env.num_envs
        self.photo = torch.zeros(n, 2, dtype=torch.long, device=env.device)  # (background, surface) per env
        self.offset = torch.zeros(n, 2, 2, dtype=torch.long, device=env.device)  # (photo, row/col) per env
        self.composed = torch.zeros(n, dtype=torch.bool, device=env.device)
        self.brightness = torch.ones(n, device=env.device)
        # (background, surface) x channel: which source channel each output channel takes, and its gain
        self.channel_order = torch.arange(3, device=env.device).repeat(n, 2, 1)
        self.channel_gain = torch.ones(n, 2, 3, device=env.device)
        self.reset(torch.arange(n, device=env.device))

    def reset(self, env_ids: torch.Tensor) -> None:
        """New photos, crops, composition flag and brightness for the selection `env_ids`."""
        generator, device, count = self.env.generator, self.env.device, selection.rows(env_ids)
        size = self.bank.size
        photo = torch.randint(0, len(self.bank), (count, 2), generator=generator, device=device)
        selection.put(self.photo, env_ids, photo)
        rows = torch.randint(0, size - self.height + 1, (count, 2), generator=generator, device=device)
        cols = torch.randint(0, size - self.width + 1, (count, 2), generator=generator, device=device)
        selection.put(self.offset, env_ids, torch.stack([rows, cols], dim=-1))
        composed = torch.rand(count, generator=generator, device=device) < self.probability
        selection.put(self.composed, env_ids, composed)
        low, high = self.brightness_range
        brightness = low + (high - low) * torch.rand(count, generator=generator, device=device)
        selection.put(self.brightness, env_ids, brightness)
        if self.recolor:  # (drawn only when on: without it the env's random stream is as before)
            order = torch.rand(count, 2, 3, generator=generator, device=device).argsort(dim=-1)
            selection.put(self.channel_order, env_ids, order)
            low, high = self.recolor_gain_range
            gain = low + (high - low) * torch.rand(count, 2, 3, generator=generator, device=device)
            selection.put(self.channel_gain, env_ids, gain)

    def state_dict(self) -> dict[str, torch.Tensor]:
        return {"photo": self.photo.clone(), "offset": self.offset.clone(), "composed": self.composed.clone(),
                "brightness": self.brightness.clone(), "channel_order": self.channel_order.clone(),
                "channel_gain": self.channel_gain.clone()}

    def _photo(self, which: int) -> torch.Tensor:
        """(num_envs, 3, H, W) crops of each env's photo `which` (0 background, 1 surface): uint8 as
        they are, or float recolored (channel order and gains) with photo_recolor."""
        crop = crops(self.bank.photos, self.photo[:, which], self.offset[:, which], self.height, self.width)
        if not self.recolor:
            return crop
        order = self.channel_order[:, which, :, None, None].expand_as(crop)
        return crop.gather(1, order).float().mul_(self.channel_gain[:, which, :, None, None])

    def __call__(self, env: ManagerBasedRLEnv, camera: CameraCfg, photos: str = "train",
                 surfaces: tuple[str, ...] = (), photo_size: int = 96,
                 brightness_range: tuple[float, float] = (0.7, 1.3), photo_probability: float = 1.0,
                 depth_range: tuple[float, float] | None = None, photo_recolor: bool = False,
                 recolor_gain_range: tuple[float, float] = (0.6, 1.4)) -> torch.Tensor:
        outputs = rendered(env, self.camera)
        rgb, segmentation = outputs["rgb"], outputs["segmentation"]
        if self.recolor:
            rgb = rgb.float()
        composed = self.composed[:, None, None, None]
        background = self._photo(0)
        image = torch.where((segmentation < 0) & composed, background, rgb)
        if self.surface_ids:
            surface = torch.zeros_like(segmentation, dtype=torch.bool)
            for geom in self.surface_ids:
                surface |= segmentation == geom
            image = torch.where(surface & composed, self._photo(1), image)
        lit = image.float().mul_(self.brightness[:, None, None, None]).round_().clamp_(0, 255)
        if self.depth_range is None:
            return lit.to(torch.uint8)
        near, far = self.depth_range
        depth = outputs["depth"].float().clamp(near, far).sub_(near).mul_(255.0 / (far - near)).round_()
        return torch.cat((lit, depth), dim=1).to(torch.uint8)
