"""Observation terms: `(env, **params) -> (num_envs, dim)` tensors."""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from canter.core.errors import ConfigError
from canter.mdp.actions import JointAction
from canter.scene.entity import Resolved

if TYPE_CHECKING:
    from canter.envs.manager_env import ManagerBasedRLEnv


def _cols(values: torch.Tensor, joints: Resolved | None, env: ManagerBasedRLEnv) -> torch.Tensor:
    """Columns of a (num_envs, num_joints) scene tensor for a joint selection (all if None); a view
    when the joints are consecutive: read it, do not write to it."""
    if joints is None or joints.count == len(env.scene.joint_ids):
        return values
    return values[:, joints.columns]


def joint_pos(env: ManagerBasedRLEnv, joints: Resolved | None = None) -> torch.Tensor:
    """Joint positions, rad or m."""
    return _cols(env.scene.joint_pos, joints, env)


def joint_pos_rel(env: ManagerBasedRLEnv, joints: Resolved | None = None) -> torch.Tensor:
    """Joint positions relative to the model's default pose (qpos0)."""
    return _cols(env.scene.joint_pos - env.scene.default_joint_pos, joints, env)


def joint_pos_limit_normalized(env: ManagerBasedRLEnv, joints: Resolved | None = None) -> torch.Tensor:
    """Joint positions mapped to [-1, 1] over their ranges (0 for unlimited joints)."""
    scene = env.scene
    low, high = scene.joint_limits[:, 0], scene.joint_limits[:, 1]
    normalized = (2.0 * scene.joint_pos - (high + low)) / (high - low).clamp_min(1e-6)
    return _cols(torch.where(scene.joint_limited, normalized, torch.zeros_like(normalized)), joints, env)


def joint_vel(env: ManagerBasedRLEnv, joints: Resolved | None = None) -> torch.Tensor:
    """Joint velocities, rad/s or m/s."""
    return _cols(env.scene.joint_vel, joints, env)


def root_height(env: ManagerBasedRLEnv) -> torch.Tensor:
    """(num_envs, 1) root height above the world origin, m."""
    return env.scene.root_pos_w[:, 2:3]


def base_lin_vel(env: ManagerBasedRLEnv) -> torch.Tensor:
    """(num_envs, 3) root linear velocity in the body frame, m/s."""
    return env.scene.root_lin_vel_b


def base_ang_vel(env: ManagerBasedRLEnv) -> torch.Tensor:
    """(num_envs, 3) root angular velocity in the body frame, rad/s."""
    return env.scene.root_ang_vel_b


def projected_gravity(env: ManagerBasedRLEnv) -> torch.Tensor:
    """(num_envs, 3) gravity direction in the body frame."""
    return env.scene.projected_gravity_b


def last_action(env: ManagerBasedRLEnv) -> torch.Tensor:
    """(num_envs, action_dim) the action of the previous step."""
    return env.action_manager.action


def joint_pos_target(env: ManagerBasedRLEnv, action_name: str = "joint_pos") -> torch.Tensor:
    """(num_envs, action_dim) the position targets a joint action term last sent, relative to the
    default pose: what a policy with relative actions (`joint_position_action(relative=True)`) moves."""
    term = env.action_manager.term(action_name)
    if not isinstance(term, JointAction):
        raise ConfigError(f"joint_pos_target: action term {action_name!r} ({type(term).__name__}) is "
                          "not a joint action (joint_position_action / joint_effort_action)")
    return (term.target - term.offset).float()


def generated_commands(env: ManagerBasedRLEnv, command_name: str) -> torch.Tensor:
    """(num_envs, dim) the current command of a command term."""
    return env.command_manager.get_command(command_name)


def sensor(env: ManagerBasedRLEnv, sensors: Resolved) -> torch.Tensor:
    """Readings of MJCF sensors, concatenated in model order (see SimCfg.sensor_stage for timing)."""
    if sensors.data_slice is not None:
        return env.sim.sensordata[:, sensors.data_slice]
    return env.sim.sensordata.index_select(1, sensors.data_adr)


def root_quat_w(env: ManagerBasedRLEnv) -> torch.Tensor:
    """(num_envs, 4) root orientation (w, x, y, z) in the world."""
    return env.scene.root_quat_w


def root_lin_vel_w(env: ManagerBasedRLEnv) -> torch.Tensor:
    """(num_envs, 3) root linear velocity in the world frame, m/s."""
    return env.scene.root_lin_vel_w
