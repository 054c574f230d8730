"""Termination terms: `(env, **params) -> (num_envs,) bool`."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import torch

from canter.mdp.observations import _cols
from canter.scene.entity import Resolved

if TYPE_CHECKING:
    from canter.envs.manager_env import ManagerBasedRLEnv


def time_out(env: ManagerBasedRLEnv) -> torch.Tensor:
    """The episode reached its length (a truncation: mark it time_out=True)."""
    return env.episode_length_buf >= env.max_episode_length


def root_height_below_minimum(env: ManagerBasedRLEnv, minimum_height: float) -> torch.Tensor:
    """The root fell below `minimum_height` metres."""
    return env.scene.root_pos_w[:, 2] < minimum_height


def bad_orientation(env: ManagerBasedRLEnv, limit_angle: float = math.pi / 2) -> torch.Tensor:
    """The base tilted more than `limit_angle` radians from upright."""
    gravity_z = env.scene.projected_gravity_b[:, 2]
    if limit_angle >= math.pi:  # no tilt exceeds it
        return torch.zeros_like(gravity_z, dtype=torch.bool)
    if limit_angle < 0.0:  # every tilt exceeds it (NaN never does)
        return gravity_z == gravity_z
    # acos(-g_z) > limit_angle, i.e. -g_z < cos(limit_angle) (acos decreases on [-1, 1]): one compare
    return gravity_z > -math.cos(limit_angle)


def joint_pos_out_of_manual_limit(
    env: ManagerBasedRLEnv, joints: Resolved, bounds: tuple[float, float]
) -> torch.Tensor:
    """Any selected joint left [low, high]."""
    q = _cols(env.scene.joint_pos, joints, env)
    return torch.any((q < bounds[0]) | (q > bounds[1]), dim=1)


def root_height_out_of_range(env: ManagerBasedRLEnv, low: float, high: float) -> torch.Tensor:
    """The root left the height band [low, high] metres (Gymnasium's 'unhealthy' ant)."""
    z = env.scene.root_pos_w[:, 2]
    return (z < low) | (z > high)


def physics_diverged(env: ManagerBasedRLEnv, max_joint_vel: float, max_root_speed: float) -> torch.Tensor:
    """The env's physics ran away: a joint faster than `max_joint_vel` (rad/s or m/s), or the root
    faster than `max_root_speed` m/s, or spinning faster than `max_joint_vel` rad/s. Far above
    anything a robot reaches (a fall included), so it only fires on a simulation gone wrong (deep
    penetration of a heightfield, a solver blow-up) and resets that env before its huge velocities
    reach the observations, the penalties and the value targets of the whole batch."""
    joints = env.scene.joint_vel.abs().amax(dim=1) > max_joint_vel
    linear = torch.linalg.vector_norm(env.scene.root_lin_vel_w, dim=1) > max_root_speed
    angular = torch.linalg.vector_norm(env.scene.root_ang_vel_b, dim=1) > max_joint_vel
    return joints | linear | angular
