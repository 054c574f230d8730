"""The heuristic high-level controller: Raibert-style footholds and PD feedback on the CoM height,
velocity and orientation, producing the same `Targets` a policy drives the low-level controller with.

    foothold_i = shoulder_i + v (t_swing_left + T_stance / 2) + k (v − v_des),  z from the ground
    a_xy = Kv (v_des − v_xy),   a_z = Kp (z_ground + h − z) − Kd v_z
    α    = Kr e_R + Kω (ω_des − ω),   e_R the rotation vector of q_des ⊗ q⁻¹ (q_des: level, heading)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from canter.control.controller import Targets
from canter.control.gait import GaitScheduler
from canter.control.kinematics import RobotState
from canter.control.robot import Quadruped
from canter.core.math import quat_from_yaw, quat_mul, yaw_from_quat
from canter.core.validate import Validated, require_at_least, require_positive

GroundFn = Callable[[torch.Tensor], torch.Tensor]  # world xy (..., 2) -> ground height (...)


@dataclass(kw_only=True)
class HeuristicCfg(Validated):
    """height: trunk origin above the ground under the feet, m. kp_height, kd_height: 1/s², 1/s.
    kv: xy velocity gain, 1/s. max_acc_xy: clamp of the xy acceleration, m/s². kp_rot, kd_rot:
    orientation and angular velocity gains (roll, pitch, yaw), 1/s², 1/s. raibert_gain: k, s.
    max_correction: clamp of the foothold correction k (v − v_des) per axis, m."""

    height: float = 0.28
    kp_height: float = 120.0
    kd_height: float = 20.0
    kv: float = 6.0
    max_acc_xy: float = 4.0
    kp_rot: tuple[float, float, float] = (150.0, 150.0, 60.0)
    kd_rot: tuple[float, float, float] = (20.0, 20.0, 12.0)
    raibert_gain: float = 0.08
    max_correction: float = 0.15

    config_name = "heuristic"

    def validate(self) -> None:
        require_positive(self, "height")
        require_at_least(self, "max_correction", 0.0)
        require_at_least(self, "max_acc_xy", 0.0)


def yaw_frame_to_world(vec_xy: torch.Tensor, yaw: torch.Tensor) -> torch.Tensor:
    """Rotate xy vectors (B, ..., 2) given in the heading frame into the world by yaw (B,)."""
    shape = (-1,) + (1,) * (vec_xy.dim() - 2)
    cos, sin = torch.cos(yaw).view(shape), torch.sin(yaw).view(shape)
    x, y = vec_xy[..., 0], vec_xy[..., 1]
    return torch.stack((cos * x - sin * y, sin * x + cos * y), dim=-1)


def shoulder_xy(state: RobotState, robot: Quadruped) -> torch.Tensor:
    """(B, 4, 2) shoulder positions projected with the heading only (roll and pitch ignored), m."""
    yaw = yaw_from_quat(state.quat)
    offsets = robot.shoulder_offset_b[:, 0:2].expand(state.root_pos.shape[0], -1, -1)
    return state.root_pos[:, None, 0:2] + yaw_frame_to_world(offsets, yaw)


def raibert_footholds(
    state: RobotState, gait: GaitScheduler, robot: Quadruped, velocity_w: torch.Tensor, cfg: HeuristicCfg
) -> torch.Tensor:
    """(B, 4, 2) world xy footholds: where each shoulder will be at touchdown plus half the stance
    travel, plus the Raibert correction k (v − v_des). velocity_w: (B, 2) desired world xy velocity."""
    velocity = state.com_vel[:, 0:2]
    time_left = (1.0 - gait.swing_progress) * gait.swing_duration()[:, None]  # (B, 4) s
    travel = velocity[:, None, :] * (time_left + 0.5 * gait.stance_duration()[:, None])[..., None]
    correction = (cfg.raibert_gain * (velocity - velocity_w)).clamp(-cfg.max_correction, cfg.max_correction)
    return shoulder_xy(state, robot) + travel + correction[:, None, :]


def body_feedback(
    state: RobotState,
    velocity_w: torch.Tensor,
    yaw_rate: torch.Tensor,
    heading: torch.Tensor,
    ground_z: torch.Tensor,
    cfg: HeuristicCfg,
) -> tuple[torch.Tensor, torch.Tensor]:
    """PD feedback (acc_lin (B, 3) m/s², acc_ang (B, 3) rad/s², world frame) towards velocity_w
    (B, 2) m/s, yaw rate (B,) rad/s, a level trunk at heading (B,) rad, `cfg.height` above ground_z
    (B,) m."""
    acc_xy = (cfg.kv * (velocity_w - state.com_vel[:, 0:2])).clamp(-cfg.max_acc_xy, cfg.max_acc_xy)
    acc_z = cfg.kp_height * (ground_z + cfg.height - state.root_pos[:, 2]) - cfg.kd_height * state.com_vel[:, 2]
    acc_lin = torch.cat((acc_xy, acc_z[:, None]), dim=-1)
    # rotation vector of q_err = q_des ⊗ q⁻¹ (world frame), small-angle: 2 sign(w) xyz
    conj = torch.cat((state.quat[:, :1], -state.quat[:, 1:]), dim=-1)
    error = quat_mul(quat_from_yaw(heading), conj)
    rot_error = 2.0 * torch.where(error[:, 0:1] < 0, -error[:, 1:4], error[:, 1:4])
    omega_des = torch.zeros_like(state.ang_vel)
    omega_des[:, 2] = yaw_rate
    # per-axis gains as Python numbers (no tensor built from host data every step)
    acc_ang = torch.stack([cfg.kp_rot[i] * rot_error[:, i] + cfg.kd_rot[i] * (omega_des[:, i] - state.ang_vel[:, i])
                           for i in range(3)], dim=-1)
    return acc_lin, acc_ang


def heuristic_targets(
    state: RobotState,
    gait: GaitScheduler,
    robot: Quadruped,
    command: torch.Tensor,
    heading: torch.Tensor,
    ground: GroundFn,
    cfg: HeuristicCfg,
) -> Targets:
    """The heuristic controller's targets. command: (B, 3) desired (vx, vy) in the heading frame, m/s,
    and yaw rate, rad/s; heading: (B,) target yaw, rad; ground: height of the terrain at world xy."""
    yaw = yaw_from_quat(state.quat)
    velocity_w = yaw_frame_to_world(command[:, 0:2], yaw)
    xy = raibert_footholds(state, gait, robot, velocity_w, cfg)
    foot_z = ground(xy) + robot.cfg.foot_radius
    footholds = torch.cat((xy, foot_z[..., None]), dim=-1)
    ground_z = ground_height_under(state, gait.stance, footholds, robot)
    acc_lin, acc_ang = body_feedback(state, velocity_w, command[:, 2], heading, ground_z, cfg)
    return Targets(acc_lin=acc_lin, acc_ang=acc_ang, phase_speed=torch.ones_like(heading), footholds=footholds)


def ground_height_under(
    state: RobotState, stance: torch.Tensor, footholds: torch.Tensor, robot: Quadruped
) -> torch.Tensor:
    """(B,) ground height the trunk height is measured from: the mean over the feet of the stance
    feet's heights and the swing feet's foothold heights, minus the foot radius."""
    z = torch.where(stance, state.foot_pos[..., 2], footholds[..., 2])
    return z.mean(dim=1) - robot.cfg.foot_radius
