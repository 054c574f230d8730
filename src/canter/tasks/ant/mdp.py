"""Terms of the ant running task: progress towards a far target, heading and posture."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import mujoco
import numpy as np
import torch

from canter.core import selection
from canter.core.math import quat_rotate, yaw_from_quat
from canter.managers.term import ManagerTerm, TermCfg

if TYPE_CHECKING:
    from canter.envs.manager_env import ManagerBasedRLEnv

TARGET_XY = (1000.0, 0.0)  # far along +x: "run forward"


def _to_target_w(env: ManagerBasedRLEnv) -> torch.Tensor:
    # target - pos as (-pos) + target (the same IEEE result), with the target as Python numbers:
    # no tensor built from host data every step (a synchronizing copy on a GPU)
    to_target = -env.scene.root_pos_w[:, :2]
    to_target[:, 0] += TARGET_XY[0]
    to_target[:, 1] += TARGET_XY[1]
    return to_target


def heading_proj(env: ManagerBasedRLEnv) -> torch.Tensor:
    """(num_envs, 1) cosine between the torso's forward (x) axis, projected on the ground, and the
    direction to the target."""
    scene = env.scene
    forward = quat_rotate(scene.root_quat_w, _axis(env, 0))[:, :2]
    to_target = _to_target_w(env)
    cos = torch.sum(forward * to_target, dim=1) / (forward.norm(dim=1) * to_target.norm(dim=1)).clamp_min(
        1e-6
    )
    return cos.unsqueeze(1)


def up_proj(env: ManagerBasedRLEnv) -> torch.Tensor:
    """(num_envs, 1) z component of the torso's up axis in the world (1 when upright)."""
    return -env.scene.projected_gravity_b[:, 2:3]


def angle_to_target(env: ManagerBasedRLEnv) -> torch.Tensor:
    """(num_envs, 1) heading error to the target, radians in [-pi, pi)."""
    to_target = _to_target_w(env)
    angle = torch.atan2(to_target[:, 1], to_target[:, 0]) - yaw_from_quat(env.scene.root_quat_w)
    return torch.atan2(torch.sin(angle), torch.cos(angle)).unsqueeze(1)


def _axis(env: ManagerBasedRLEnv, index: int) -> torch.Tensor:
    eye = torch.eye(3, dtype=env.sim.dtype, device=env.device)  # a device-side fill, no host copy
    return eye[index].expand(env.num_envs, 3)


class Progress(ManagerTerm):
    """Potential-based progress: (d_prev - d) / dt, the speed towards the target in m/s."""

    def __init__(self, cfg: TermCfg, env: ManagerBasedRLEnv):
        super().__init__(cfg, env)
        self.prev_distance = torch.zeros(env.num_envs, device=env.device)

    def __call__(self, env: ManagerBasedRLEnv, **params: Any) -> torch.Tensor:
        distance = _to_target_w(env).norm(dim=1).float()
        progress = (self.prev_distance - distance) / env.step_dt
        self.prev_distance.copy_(distance)
        return progress

    def reset(self, env_ids: torch.Tensor) -> None:
        selection.put(self.prev_distance, env_ids, selection.take(_to_target_w(self.env), env_ids).norm(dim=1))

    def state_dict(self) -> dict[str, torch.Tensor]:
        return {"prev_distance": self.prev_distance.clone()}


def upright(env: ManagerBasedRLEnv, threshold: float = 0.93) -> torch.Tensor:
    """1 while the torso's up axis is within acos(threshold) of vertical."""
    return (up_proj(env)[:, 0] > threshold).float()


def move_to_target(env: ManagerBasedRLEnv, threshold: float = 0.8) -> torch.Tensor:
    """1 when facing the target (heading_proj > threshold), else heading_proj / threshold."""
    proj = heading_proj(env)[:, 0]
    return torch.where(proj > threshold, torch.ones_like(proj), proj / threshold).float()


def add_foot_touch_sensors(spec: mujoco.MjSpec) -> None:
    """Give a model without '*_touch' sensors one touch sensor per foot (each leaf body of the
    kinematic tree), on a site at the far end of the foot's first geom. Lets the ant task run on
    any ant-like MJCF, e.g. one used by another framework, for side-by-side benchmarks."""
    if any(s.name.endswith("_touch") for s in spec.sensors):
        return
    for body in spec.bodies:
        if body.name == "world" or len(body.bodies) > 0 or len(body.geoms) == 0:
            continue
        geom = body.geoms[0]
        fromto = np.asarray(geom.fromto, dtype=float)
        if np.all(np.isfinite(fromto)) and np.any(fromto != 0):
            pos, radius = fromto[3:6], 1.5 * float(geom.size[0])
        else:
            pos, radius = np.asarray(geom.pos, dtype=float), 1.5 * float(np.max(geom.size))
        name = body.name or f"body{len(spec.sites)}"
        site = body.add_site(name=f"{name}_touch_site", pos=pos, size=[radius, 0, 0])
        spec.add_sensor(
            name=f"{name}_touch",
            type=mujoco.mjtSensor.mjSENS_TOUCH,
            objtype=mujoco.mjtObj.mjOBJ_SITE,
            objname=site.name,
        )


class ForwardVelocity(ManagerTerm):
    """(x_now - x_before) / step_dt: the root's average +x speed over the control step, m/s."""

    def __init__(self, cfg: TermCfg, env: ManagerBasedRLEnv):
        super().__init__(cfg, env)
        self.prev_x = torch.zeros(env.num_envs, device=env.device)

    def __call__(self, env: ManagerBasedRLEnv, **params: Any) -> torch.Tensor:
        x = env.scene.root_pos_w[:, 0].float()
        velocity = (x - self.prev_x) / env.step_dt
        self.prev_x.copy_(x)
        return velocity

    def reset(self, env_ids: torch.Tensor) -> None:
        selection.put(self.prev_x, env_ids, selection.take(self.env.scene.root_pos_w, env_ids, 0))

    def state_dict(self) -> dict[str, torch.Tensor]:
        return {"prev_x": self.prev_x.clone()}
