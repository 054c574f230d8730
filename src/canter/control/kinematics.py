"""Batched leg kinematics from the simulator's own frames: foot positions and velocities, foot
Jacobians, and the map from Cartesian foot forces to joint torques (τ = Jᵀ F).

A hinge joint with world axis a and anchor c moves a point p at (a × (p − c)) per rad/s, which is
exactly the column MuJoCo's mj_jac writes; so the foot Jacobian of a leg is three cross products
of fields every backend already computes (xaxis, xanchor, site_xpos). Nothing calls back into the
physics engine, and the same code runs on the cpu and warp backends.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from canter.control.robot import Quadruped
from canter.core.math import quat_rotate
from canter.sim.backend import Simulator


def quat_to_matrix(quat: torch.Tensor) -> torch.Tensor:
    """(..., 4) unit quaternions (w, x, y, z) -> (..., 3, 3) rotation matrices (body -> world)."""
    w, x, y, z = quat.unbind(-1)
    rows = (
        (1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)),
        (2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)),
        (2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)),
    )
    return torch.stack([torch.stack(row, dim=-1) for row in rows], dim=-2)


def leg_jacobians(axis: torch.Tensor, anchor: torch.Tensor, foot: torch.Tensor) -> torch.Tensor:
    """Translational foot Jacobians w.r.t. each leg's own joints.

    axis, anchor: (B, L, J, 3) world joint axes (unit) and anchors; foot: (B, L, 3) world foot points.
    Returns (B, L, 3, J): column k = axis_k × (foot − anchor_k), m/rad.
    """
    return torch.linalg.cross(axis, foot[:, :, None, :] - anchor, dim=-1).transpose(-1, -2)


def forces_to_torques(jacobian: torch.Tensor, force: torch.Tensor) -> torch.Tensor:
    """τ = Jᵀ F per leg: jacobian (B, L, 3, J), force (B, L, 3) in N -> (B, L, J) in N·m: the joint
    torques whose effect on the foot equals the force F applied at it."""
    return (jacobian.transpose(-1, -2) @ force[..., None])[..., 0]


@dataclass
class RobotState:
    """What the controller reads each tick, all world frame, float of the simulator's dtype.

    root_pos (B, 3), rot (B, 3, 3) body -> world, root_lin_vel (B, 3), ang_vel (B, 3) world;
    com (B, 3) whole-body CoM, com_vel (B, 3) (rigid-body approximation: root velocity + ω × r);
    foot_pos, foot_vel (B, 4, 3); jacobian (B, 4, 3, 3); shoulder_pos (B, 4, 3); joint_vel (B, 4, 3).
    """

    root_pos: torch.Tensor
    quat: torch.Tensor
    rot: torch.Tensor
    root_lin_vel: torch.Tensor
    ang_vel: torch.Tensor
    com: torch.Tensor
    com_vel: torch.Tensor
    foot_pos: torch.Tensor
    foot_vel: torch.Tensor
    jacobian: torch.Tensor
    shoulder_pos: torch.Tensor
    joint_vel: torch.Tensor


FIELDS = ("site_xpos", "xaxis", "xanchor", "subtree_com", "xpos", "qfrc_bias")


def bind_fields(sim: Simulator) -> None:
    """Register the derived fields the controller reads. Call before the first step or forward: the
    cpu backend fills a field it was asked for only from its next call on."""
    for name in FIELDS:
        sim.field(name)


def read_state(sim: Simulator, robot: Quadruped) -> RobotState:
    """The controller's view of every env: root state from qpos/qvel (always current), frames from
    the derived fields (current when SimCfg.sensor_stage is "current")."""
    qpos, qvel = sim.qpos, sim.qvel
    root_pos, quat = qpos[:, 0:3], qpos[:, 3:7]
    rot = quat_to_matrix(quat)
    root_lin_vel = qvel[:, 0:3]
    ang_vel = quat_rotate(quat, qvel[:, 3:6])  # free-joint angular velocity is in the body frame
    joint_vel = qvel[:, robot.dof_adr]  # (B, 4, 3)
    foot_pos = sim.field("site_xpos")[:, robot.foot_site_ids]
    axis = sim.field("xaxis")[:, robot.joint_ids]
    anchor = sim.field("xanchor")[:, robot.joint_ids]
    jacobian = leg_jacobians(axis, anchor, foot_pos)
    # v_foot = v_root + ω × (p_foot − p_root) + J q̇_leg
    base_part = root_lin_vel[:, None, :] + torch.linalg.cross(
        ang_vel[:, None, :].expand_as(foot_pos), foot_pos - root_pos[:, None, :], dim=-1
    )
    foot_vel = base_part + (jacobian @ joint_vel[..., None])[..., 0]
    com = sim.field("subtree_com")[:, robot.trunk_id]
    com_vel = root_lin_vel + torch.linalg.cross(ang_vel, com - root_pos, dim=-1)
    shoulder_pos = sim.field("xpos")[:, robot.shoulder_body_ids]
    return RobotState(
        root_pos=root_pos, quat=quat, rot=rot, root_lin_vel=root_lin_vel, ang_vel=ang_vel, com=com,
        com_vel=com_vel, foot_pos=foot_pos, foot_vel=foot_vel, jacobian=jacobian,
        shoulder_pos=shoulder_pos, joint_vel=joint_vel,
    )
