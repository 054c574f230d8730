"""Visual domain randomization (Tobin et al. 2017, seed 002): event terms `(env, env_ids, **params)`
that change what a camera sees and nothing the physics feels.

Like canter.mdp.randomization, each term draws from the env's generator, writes only the rows
`env_ids` of per-env model fields through `sim.expand()` (geom colors, light directions, camera pose
and field of view), and logs what it drew as `Randomization/<name>/...`. The camera reads those
fields every render (canter.sensors). Photo backgrounds and textures, brightness and pixel noise
are image-space randomizations: see canter.sensors.photo_terms and the observation term's noise.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from canter.core import selection
from canter.core.errors import ConfigError
from canter.core.math import quat_mul, quat_rotate
from canter.mdp.randomization import _check_range, _record, _require_kind
from canter.scene.entity import Resolved

if TYPE_CHECKING:
    from canter.envs.manager_env import ManagerBasedRLEnv


def _uniform(env: ManagerBasedRLEnv, shape: tuple[int, ...], low: float, high: float) -> torch.Tensor:
    """U(low, high) float32 from the env's generator."""
    return low + (high - low) * torch.rand(shape, generator=env.generator, device=env.device)


def randomize_geom_colors(
    env: ManagerBasedRLEnv,
    env_ids: torch.Tensor,
    geoms: Resolved,
    color_range: tuple[float, float] | tuple[tuple[float, float], tuple[float, float], tuple[float, float]] = (0.05, 0.95),
    name: str = "geom_color",
) -> None:
    """Each selected geom of each env gets an RGB color drawn per channel from U(color_range), one
    range for all channels or one (low, high) per channel (e.g. keep a target reddish and the
    distractors not); alpha keeps its nominal value. Logged: (num_envs, geoms, 3) colors."""
    _require_kind("randomize_geom_colors", "geoms", geoms, "geom")
    ranges: list[tuple[float, float]] = (
        [tuple(b) for b in color_range] if isinstance(color_range[0], tuple | list) else [color_range] * 3  # type: ignore[misc]
    )
    if len(ranges) != 3:
        raise ConfigError(f"randomize_geom_colors: color_range is one (low, high) or three, got {color_range}")
    for bounds in ranges:
        _check_range("randomize_geom_colors", "color_range", bounds, minimum=0.0)
        if bounds[1] > 1.0:
            raise ConfigError(f"randomize_geom_colors: color_range must lie in [0, 1], got {color_range}")
    colors = torch.rand((selection.rows(env_ids), geoms.count, 3), generator=env.generator, device=env.device)
    for channel, (low, high) in enumerate(ranges):  # Python numbers: no tensor of host data per reset
        colors[..., channel] = float(low) + (float(high) - float(low)) * colors[..., channel]
    rgba = env.sim.expand("geom_rgba")
    selection.put(rgba, env_ids, colors, geoms.ids, slice(0, 3))
    nominal = env.scene.model_field("geom_rgba")[geoms.ids][:, :3]
    _record(env, name, env_ids, colors, nominal.float())


def _small_rotations(env: ManagerBasedRLEnv, count: int, max_angle_rad: float) -> torch.Tensor:
    """(count, 4) unit quaternions (w, x, y, z) of rotations by U(0, max_angle) about uniformly random axes."""
    axis = torch.randn(count, 3, generator=env.generator, device=env.device)
    axis = axis / axis.norm(dim=-1, keepdim=True).clamp_min(1e-9)
    half = 0.5 * _uniform(env, (count, 1), 0.0, max_angle_rad)
    return torch.cat([half.cos(), half.sin() * axis], dim=-1)


def randomize_light(
    env: ManagerBasedRLEnv,
    env_ids: torch.Tensor,
    direction_noise_rad: float = 0.5,
    name: str = "light_direction",
) -> None:
    """Every light's direction (light_dir, in its body frame) turned from its nominal one by a random
    rotation of up to direction_noise_rad. Logged: (num_envs, nlight) angle from the nominal, rad."""
    if not direction_noise_rad >= 0:
        raise ConfigError(f"randomize_light: direction_noise_rad must be >= 0, got {direction_noise_rad}")
    nlight = env.sim.model.nlight
    if nlight == 0:
        raise ConfigError("randomize_light: the model has no light")
    nominal = env.scene.model_field("light_dir").float()  # (nlight, 3)
    count = selection.rows(env_ids)
    rotation = _small_rotations(env, count * nlight, direction_noise_rad)
    direction = quat_rotate(rotation, nominal.repeat(count, 1)).view(count, nlight, 3)
    selection.put(env.sim.expand("light_dir"), env_ids, direction)
    cosine = (direction * nominal).sum(-1) / (direction.norm(dim=-1) * nominal.norm(dim=-1)).clamp_min(1e-9)
    _record(env, name, env_ids, cosine.clamp(-1, 1).acos(), torch.zeros(nlight, device=env.device))


def randomize_camera(
    env: ManagerBasedRLEnv,
    env_ids: torch.Tensor,
    camera: str,
    position_noise: float = 0.005,
    rotation_noise_rad: float = 0.05,
    fovy_range: tuple[float, float] | None = None,
    name: str = "camera",
) -> None:
    """The camera's mounting jittered per env: its position (cam_pos, body frame) moved by U(±position_noise)
    m per axis, its orientation (cam_quat) turned by up to rotation_noise_rad, its vertical field of view
    (cam_fovy) drawn from U(fovy_range) degrees when given (else nominal). Logged: (num_envs, 3)
    (offset norm m, rotation angle rad, fovy deg)."""
    model = env.sim.model
    try:
        cam = model.camera(camera).id
    except KeyError as err:
        names = [model.camera(i).name for i in range(model.ncam)]
        raise ConfigError(f"randomize_camera: the model has no camera {camera!r} (cameras: {names})") from err
    if not (position_noise >= 0 and rotation_noise_rad >= 0):
        raise ConfigError("randomize_camera: position_noise and rotation_noise_rad must be >= 0")
    count = selection.rows(env_ids)
    offset = _uniform(env, (count, 3), -position_noise, position_noise)
    nominal_pos = env.scene.model_field("cam_pos")[cam].float()
    selection.put(env.sim.expand("cam_pos"), env_ids, nominal_pos + offset, cam)
    turn = _small_rotations(env, count, rotation_noise_rad)
    nominal_quat = env.scene.model_field("cam_quat")[cam].float().expand(count, 4)
    selection.put(env.sim.expand("cam_quat"), env_ids, quat_mul(nominal_quat, turn), cam)
    fovy = env.scene.model_field("cam_fovy")[cam].float().expand(count).clone()
    if fovy_range is not None:
        _check_range("randomize_camera", "fovy_range", fovy_range, minimum=1.0)
        fovy = _uniform(env, (count,), *fovy_range)
        selection.put(env.sim.expand("cam_fovy"), env_ids, fovy, cam)
    angle = 2.0 * turn[:, 0].clamp(-1, 1).acos()
    logged = torch.stack([offset.norm(dim=-1), angle, fovy], dim=-1)
    neutral = torch.zeros(3, device=env.device)
    neutral[2] = float(model.cam_fovy[cam])
    _record(env, name, env_ids, logged, neutral)
