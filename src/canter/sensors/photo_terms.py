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
of every hue, the sphere's red among them, so a policy cannot find its target by color alone. It is
training-time randomization: `canter eval/play --photos` show photos as they are (it is switched off).

With `decoys=K` (K > 0) each env also paints, per episode, U{0..K} flat discs on its surface photo (the
table): centres anywhere in the image, radii uniform in `decoy_radius_px`, colors uniform per channel
in `decoy_color_range` (0..1). Given the target's colors they are targets in everything but depth: a
red round spot in a photo (a retina's macula) no longer looks like a sphere to a student that never
saw a flat one. Also training-time only (`--photos` on eval/play switches it off).
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
        self.decoys = int(params.get("decoys", 0))
        radius_low, radius_high = params.get("decoy_radius_px", (2.0, 6.0))
        color_range = params.get("decoy_color_range", ((0.0, 1.0),) * 3)
        if self.decoys < 0 or not 0 < radius_low <= radius_high:
            raise ConfigError(f"PhotoCameraImage: decoys must be >= 0 and decoy_radius_px satisfy 0 < low <= high, "
                              f"got {self.decoys} and {tuple(params.get('decoy_radius_px', (2.0, 6.0)))}")
        if self.decoys and not surfaces:
            raise ConfigError("PhotoCameraImage: decoys are painted on the surfaces' photo: name surfaces")
        color_range = torch.as_tensor(color_range, dtype=torch.float32, device=env.device)
        if color_range.shape != (3, 2) or not bool(((color_range >= 0) & (color_range <= 1)).all()) \
                or not bool((color_range[:, 0] <= color_range[:, 1]).all()):
            raise ConfigError(f"PhotoCameraImage: decoy_color_range must be three (low, high) pairs within 0..1, "
                              f"got {params.get('decoy_color_range')}")
        self.decoy_radius_range, self.decoy_color_range = (float(radius_low), float(radius_high)), color_range
        n = env.num_envs
        self.photo = torch.zeros(n, 2, dtype=torch.long, device=env.device)  # (background, surface) per env
        self.offset = torch.zeros(n, 2, 2, dtype=torch.long, device=env.device)  # (photo, row/col) per env
        self.composed = torch.zeros(n, dtype=torch.bool, device=env.device)
        self.brightness = torch.ones(n, device=env.device)
        # (background, surface) x channel: which source channel each output channel takes, and its gain
        self.channel_order = torch.arange(3, device=env.device).repeat(n, 2, 1)
        self.channel_gain = torch.ones(n, 2, 3, device=env.device)
        # decoy discs per env: centre (row, col) and radius in pixels, color 0..255, whether painted
        self.decoy_centre = torch.zeros(n, self.decoys, 2, device=env.device)
        self.decoy_radius = torch.zeros(n, self.decoys, device=env.device)
        self.decoy_color = torch.zeros(n, self.decoys, 3, device=env.device)
        self.decoy_active = torch.zeros(n, self.decoys, dtype=torch.bool, device=env.device)
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
        if self.decoys:
            k = self.decoys
            size = torch.tensor([self.height, self.width], dtype=torch.float32, device=device)
            selection.put(self.decoy_centre, env_ids, torch.rand(count, k, 2, generator=generator, device=device) * size)
            low, high = self.decoy_radius_range
            radius = low + (high - low) * torch.rand(count, k, generator=generator, device=device)
            selection.put(self.decoy_radius, env_ids, radius)
            lo, hi = self.decoy_color_range[:, 0], self.decoy_color_range[:, 1]
            color = 255.0 * (lo + (hi - lo) * torch.rand(count, k, 3, generator=generator, device=device))
            selection.put(self.decoy_color, env_ids, color)
            painted = torch.randint(0, k + 1, (count, 1), generator=generator, device=device)
            selection.put(self.decoy_active, env_ids, torch.arange(k, device=device) < painted)

    def state_dict(self) -> dict[str, torch.Tensor]:
        return {"photo": self.photo.clone(), "offset": self.offset.clone(), "composed": self.composed.clone(),
                "brightness": self.brightness.clone(), "channel_order": self.channel_order.clone(),
                "channel_gain": self.channel_gain.clone(), "decoy_centre": self.decoy_centre.clone(),
                "decoy_radius": self.decoy_radius.clone(), "decoy_color": self.decoy_color.clone(),
                "decoy_active": self.decoy_active.clone()}

    def _photo(self, which: int) -> torch.Tensor:
        """(num_envs, 3, H, W) crops of each env's photo `which` (0 background, 1 surface): uint8 as
        they are, or float recolored (channel order and gains) with photo_recolor."""
        crop = crops(self.bank.photos, self.photo[:, which], self.offset[:, which], self.height, self.width)
        if not self.recolor:
            return crop
        order = self.channel_order[:, which, :, None, None].expand_as(crop)
        return crop.gather(1, order).float().mul_(self.channel_gain[:, which, :, None, None])

    def _paint_decoys(self, texture: torch.Tensor) -> torch.Tensor:
        """The surface photo (num_envs, 3, H, W) with each env's active decoy discs painted on it, later
        ones over earlier ones (float)."""
        texture = texture.float()
        rows = torch.arange(self.height, device=texture.device, dtype=torch.float32)[:, None] + 0.5
        cols = torch.arange(self.width, device=texture.device, dtype=torch.float32)[None, :] + 0.5
        for k in range(self.decoys):  # a handful of discs, each over all envs at once
            centre = self.decoy_centre[:, k]
            inside = (rows - centre[:, 0, None, None]).square() + (cols - centre[:, 1, None, None]).square() \
                < self.decoy_radius[:, k, None, None].square()
            inside &= self.decoy_active[:, k, None, None]
            texture = torch.where(inside[:, None], self.decoy_color[:, k, :, None, None], texture)
        return texture

    def __call__(self, env: ManagerBasedRLEnv, camera: CameraCfg, photos: str = "train",
                 surfaces: tuple[str, ...] = (), photo_size: int = 96,
                 brightness_range: tuple[float, float] = (0.7, 1.3), photo_probability: float = 1.0,
                 depth_range: tuple[float, float] | None = None, photo_recolor: bool = False,
                 recolor_gain_range: tuple[float, float] = (0.6, 1.4), decoys: int = 0,
                 decoy_radius_px: tuple[float, float] = (2.0, 6.0),
                 decoy_color_range: tuple[tuple[float, float], ...] = ((0.0, 1.0),) * 3) -> torch.Tensor:
        outputs = rendered(env, self.camera)
        rgb, segmentation = outputs["rgb"], outputs["segmentation"]
        if self.recolor or self.decoys:
            rgb = rgb.float()
        composed = self.composed[:, None, None, None]
        background = self._photo(0)
        image = torch.where((segmentation < 0) & composed, background, rgb)
        if self.surface_ids:
            surface = torch.zeros_like(segmentation, dtype=torch.bool)
            for geom in self.surface_ids:
                surface |= segmentation == geom
            texture = self._paint_decoys(self._photo(1)) if self.decoys else self._photo(1)
            image = torch.where(surface & composed, texture, image)
        lit = image.float().mul_(self.brightness[:, None, None, None]).round_().clamp_(0, 255)
        if self.depth_range is None:
            return lit.to(torch.uint8)
        near, far = self.depth_range
        depth = outputs["depth"].float().clamp(near, far).sub_(near).mul_(255.0 / (far - near)).round_()
        return torch.cat((lit, depth), dim=1).to(torch.uint8)
