"""Event terms `(env, env_ids, **params)` (env_ids a selection: canter.core.selection): initial-state
sampling and pushes. Domain randomization
(friction, masses, gains, ...) lives in canter.mdp.randomization. All draws come from the env's
generator, so the same seed gives the same events.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from canter.core import selection
from canter.core.math import quat_from_yaw, quat_mul
from canter.scene.entity import Resolved

if TYPE_CHECKING:
    from canter.envs.manager_env import ManagerBasedRLEnv


def _uniform(env: ManagerBasedRLEnv, shape: tuple[int, ...], bounds: tuple[float, float]) -> torch.Tensor:
    u = torch.rand(shape, generator=env.generator, device=env.device)
    return (bounds[0] + (bounds[1] - bounds[0]) * u).to(env.sim.dtype)


def reset_joints_by_offset(
    env: ManagerBasedRLEnv,
    env_ids: torch.Tensor,
    position_range: tuple[float, float],
    velocity_range: tuple[float, float] = (0.0, 0.0),
    joints: Resolved | None = None,
) -> None:
    """q = q_default + U(position_range), qd = U(velocity_range), clamped to the joint ranges."""
    scene = env.scene
    shape = (selection.rows(env_ids), scene.joint_qpos_adr.numel() if joints is None else joints.count)
    noise = _uniform(env, shape, position_range)
    velocity = _uniform(env, shape, velocity_range)
    if joints is None:  # every joint: the scene's own tensors, no lookups
        q = scene.default_joint_pos + noise
        low, high, limited = scene.joint_limits[:, 0], scene.joint_limits[:, 1], scene.joint_limited
        qpos_adr, dof_adr = scene.joint_qpos_adr, scene.joint_dof_adr
    else:
        cols = joints.columns
        q = scene.default_joint_pos[cols] + noise
        low, high, limited = scene.joint_limits[cols, 0], scene.joint_limits[cols, 1], scene.joint_limited[cols]
        qpos_adr, dof_adr = joints.qpos_adr, joints.dof_adr
    q = torch.where(limited, torch.clamp(q, low, high), q)
    selection.put(env.sim.qpos, env_ids, q, qpos_adr)
    selection.put(env.sim.qvel, env_ids, velocity, dof_adr)


def reset_root_state_uniform(
    env: ManagerBasedRLEnv,
    env_ids: torch.Tensor,
    position_range: tuple[float, float] = (0.0, 0.0),
    yaw_range: tuple[float, float] = (0.0, 0.0),
    velocity_range: tuple[float, float] = (0.0, 0.0),
) -> None:
    """Free root: x, y offset by U(position_range) from the default pose, heading rotated by U(yaw_range),
    all six velocity components drawn from U(velocity_range)."""
    n = selection.rows(env_ids)
    qpos0 = env.scene.default_qpos[:7]
    pos = qpos0[:3].expand(n, 3).clone()
    pos[:, :2] += _uniform(env, (n, 2), position_range)
    quat = quat_mul(quat_from_yaw(_uniform(env, (n,), yaw_range)), qpos0[3:7].expand(n, 4))
    selection.put(env.sim.qpos, env_ids, pos, slice(0, 3))
    selection.put(env.sim.qpos, env_ids, quat, slice(3, 7))
    selection.put(env.sim.qvel, env_ids, _uniform(env, (n, 6), velocity_range), slice(0, 6))


def push_by_setting_velocity(
    env: ManagerBasedRLEnv, env_ids: torch.Tensor, velocity_range: tuple[float, float]
) -> None:
    """Add U(velocity_range) to the root's planar linear velocity (a push)."""
    push = _uniform(env, (selection.rows(env_ids), 2), velocity_range)
    selection.put(env.sim.qvel, env_ids, selection.take(env.sim.qvel, env_ids, slice(0, 2)) + push, slice(0, 2))
