"""RGB from ray hits, in torch: base color × (ambient + Σ_lights diffuse · max(0, n·l)).

The base color of a hit is its geom's rgba (or its material's, when the geom keeps MuJoCo's default
rgba 0.5 0.5 0.5 1 and has a material, as MuJoCo's renderers do). Ambient is the headlight's ambient
(when the headlight is on) plus every active light's ambient; each active light adds its diffuse
color times the Lambert factor max(0, n·l) with l the unit vector towards the light (the light's
-direction for directional lights, towards its position otherwise; no attenuation, spot cones,
specular highlights, shadows or textures). A model without active lights is lit by a default
directional light straight down (diffuse 0.7, ambient 0.3). Misses are black.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import torch

_DEFAULT_RGBA = (0.5, 0.5, 0.5, 1.0)


@dataclass(kw_only=True)
class Lighting:
    """Lights of a model, on a device. Directions/positions are world-frame, per env when given."""

    ambient: torch.Tensor  # (3,) summed ambient color
    diffuse: torch.Tensor  # (L, 3) diffuse color per light
    directional: torch.Tensor  # (L,) bool: directional (else positional)
    default_dir: torch.Tensor | None  # (3,) direction of the default light when the model has none


def active_light_ids(model: mujoco.MjModel) -> list[int]:
    """Ids of the model's active lights."""
    return [i for i in range(model.nlight) if bool(model.light_active[i])]


def model_lighting(model: mujoco.MjModel, device: torch.device) -> Lighting:
    """The active lights of `model` and the summed ambient term."""
    ids = active_light_ids(model)
    ambient = torch.zeros(3, dtype=torch.float32)
    if model.vis.headlight.active:
        ambient += torch.as_tensor(model.vis.headlight.ambient, dtype=torch.float32)
    for i in ids:
        ambient += torch.as_tensor(model.light_ambient[i], dtype=torch.float32)
    diffuse = torch.as_tensor(model.light_diffuse[ids], dtype=torch.float32).reshape(len(ids), 3)
    directional = torch.as_tensor(
        [int(model.light_type[i]) == int(mujoco.mjtLightType.mjLIGHT_DIRECTIONAL) for i in ids],
        dtype=torch.bool,
    )
    default_dir = None
    if not ids:
        ambient = torch.full((3,), 0.3)
        diffuse = torch.full((1, 3), 0.7)
        directional = torch.ones(1, dtype=torch.bool)
        default_dir = torch.tensor([0.0, 0.0, -1.0])
    return Lighting(
        ambient=ambient.to(device),
        diffuse=diffuse.to(device),
        directional=directional.to(device),
        default_dir=None if default_dir is None else default_dir.to(device),
    )


def base_colors(model: mujoco.MjModel, geom_rgba: torch.Tensor) -> torch.Tensor:
    """(..., ngeom + 1, 3) float32 base colors from (..., ngeom, 4) geom rgba; the extra last row is
    the background (black), so index it with `geom_id` mapped -1 -> ngeom."""
    rgb = geom_rgba[..., :3].to(torch.float32)
    matid = torch.as_tensor(model.geom_matid, device=geom_rgba.device)
    if bool((matid >= 0).any()):
        mat_rgb = torch.as_tensor(model.mat_rgba[:, :3], dtype=torch.float32, device=geom_rgba.device)
        is_default = (geom_rgba == geom_rgba.new_tensor(_DEFAULT_RGBA)).all(dim=-1) & (matid >= 0)
        rgb = torch.where(is_default[..., None], mat_rgb[matid.clamp(min=0)], rgb)
    background = rgb.new_zeros(*rgb.shape[:-2], 1, 3)
    return torch.cat((rgb, background), dim=-2)


def shade(
    color: torch.Tensor,
    normal: torch.Tensor,
    lighting: Lighting,
    light_dir: torch.Tensor | None,
    light_pos: torch.Tensor | None,
    hit_point: torch.Tensor | None,
) -> torch.Tensor:
    """Lambert shading.

    color (N, P, 3) float32 base colors in [0, 1]; normal (N, P, 3) unit surface normals (zero for
    misses); light_dir/light_pos (N, L, 3) world-frame light directions/positions of the active
    lights (None with the default light); hit_point (N, P, 3) world hit positions, needed only for
    positional lights. Returns (N, P, 3) float32 in [0, 1].
    """
    light = lighting.ambient.expand_as(color).clone()
    count = lighting.diffuse.shape[0]
    for index in range(count):  # a handful of lights, not envs
        if lighting.default_dir is not None:
            towards = (-lighting.default_dir).expand_as(normal)
        elif bool(lighting.directional[index]):
            assert light_dir is not None
            towards = -light_dir[:, index : index + 1, :]
        else:
            assert light_pos is not None and hit_point is not None
            towards = torch.nn.functional.normalize(light_pos[:, index : index + 1, :] - hit_point, dim=-1)
        lambert = (normal * towards).sum(dim=-1, keepdim=True).clamp_(min=0.0)
        light.addcmul_(lambert, lighting.diffuse[index].expand_as(light))
    return (color * light).clamp_(0.0, 1.0)


def to_uint8(rgb: torch.Tensor, height: int, width: int) -> torch.Tensor:
    """(N, H*W, 3) float in [0, 1] -> (N, 3, H, W) uint8 (rounded)."""
    return rgb.mul(255.0).add_(0.5).to(torch.uint8).transpose(1, 2).reshape(rgb.shape[0], 3, height, width)
