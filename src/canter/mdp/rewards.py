"""Reward terms: `(env, **params) -> (num_envs,)`. The manager multiplies by weight and dt."""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from canter.mdp.observations import _cols
from canter.scene.entity import Resolved

if TYPE_CHECKING:
    from canter.envs.manager_env import ManagerBasedRLEnv


def is_alive(env: ManagerBasedRLEnv) -> torch.Tensor:
    """1 for envs that did not reach a terminal state this step."""
    return (~env.termination_manager.terminated).float()


def is_terminated(env: ManagerBasedRLEnv) -> torch.Tensor:
    """1 for envs that reached a terminal state (not a time-out) this step."""
    return env.termination_manager.terminated.float()


def joint_pos_target_l2(env: ManagerBasedRLEnv, joints: Resolved, target: float) -> torch.Tensor:
    """sum_j (q_j - target)^2 over the selected joints."""
    return torch.sum((_cols(env.scene.joint_pos, joints, env) - target) ** 2, dim=1)


def joint_vel_l1(env: ManagerBasedRLEnv, joints: Resolved | None = None) -> torch.Tensor:
    """sum_j |qd_j|."""
    return torch.sum(torch.abs(_cols(env.scene.joint_vel, joints, env)), dim=1)


def joint_vel_l2(env: ManagerBasedRLEnv, joints: Resolved | None = None) -> torch.Tensor:
    """sum_j qd_j^2."""
    return torch.sum(_cols(env.scene.joint_vel, joints, env) ** 2, dim=1)


def action_l2(env: ManagerBasedRLEnv) -> torch.Tensor:
    """sum_i a_i^2 of the current action."""
    return torch.sum(env.action_manager.action**2, dim=1)


def action_rate_l2(env: ManagerBasedRLEnv) -> torch.Tensor:
    """sum_i (a_i - a_prev_i)^2."""
    return torch.sum((env.action_manager.action - env.action_manager.prev_action) ** 2, dim=1)


def joint_pos_limits(env: ManagerBasedRLEnv, soft_ratio: float = 0.99) -> torch.Tensor:
    """sum_j of how far each limited joint is beyond soft_ratio of its range (0 inside)."""
    scene = env.scene
    low, high = scene.joint_limits[:, 0], scene.joint_limits[:, 1]
    mid, half = 0.5 * (low + high), 0.5 * (high - low) * soft_ratio
    over = (scene.joint_pos - (mid + half)).clamp_min(0.0) + ((mid - half) - scene.joint_pos).clamp_min(0.0)
    return torch.sum(torch.where(scene.joint_limited, over, torch.zeros_like(over)), dim=1)


def joint_power_l1(env: ManagerBasedRLEnv) -> torch.Tensor:
    """sum_j |a_j * qd_j| over the joints the actuators drive: an energy proxy (Isaac Lab's 'energy')."""
    return torch.sum(torch.abs(env.action_manager.action * env.scene.actuated_joint_vel), dim=1)


def lin_vel_z_l2(env: ManagerBasedRLEnv) -> torch.Tensor:
    """Squared vertical base velocity (body frame)."""
    return env.scene.root_lin_vel_b[:, 2] ** 2


def ang_vel_xy_l2(env: ManagerBasedRLEnv) -> torch.Tensor:
    """Squared roll and pitch rates."""
    return torch.sum(env.scene.root_ang_vel_b[:, :2] ** 2, dim=1)


def flat_orientation_l2(env: ManagerBasedRLEnv) -> torch.Tensor:
    """Squared tilt: the x, y components of gravity in the body frame."""
    return torch.sum(env.scene.projected_gravity_b[:, :2] ** 2, dim=1)


def body_roll_l2(env: ManagerBasedRLEnv) -> torch.Tensor:
    """Squared sideways tilt: the y (lateral) component of gravity in the body frame, sin^2(roll)cos^2(pitch)
    for roll and pitch angles. Pitch alone costs nothing, so that a body may pitch up and down steps."""
    return env.scene.projected_gravity_b[:, 1] ** 2


def track_lin_vel_xy_exp(env: ManagerBasedRLEnv, command_name: str, std: float) -> torch.Tensor:
    """exp(-|v_xy,cmd - v_xy|^2 / std^2), body frame."""
    command = env.command_manager.get_command(command_name)
    error = torch.sum((command[:, :2] - env.scene.root_lin_vel_b[:, :2].float()) ** 2, dim=1)
    return torch.exp(-error / std**2)


def track_ang_vel_z_exp(env: ManagerBasedRLEnv, command_name: str, std: float) -> torch.Tensor:
    """exp(-(wz_cmd - wz)^2 / std^2)."""
    command = env.command_manager.get_command(command_name)
    error = (command[:, 2] - env.scene.root_ang_vel_b[:, 2].float()) ** 2
    return torch.exp(-error / std**2)
