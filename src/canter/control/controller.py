"""The low-level locomotion controller: gait scheduler + swing-leg controller + centroidal body
controller, for all envs at once. Each tick it turns high-level targets (CoM acceleration, phase
speed, footholds) and the robot state into joint torques:

    stance legs:  τ = −Jᵀ f,  f from the GRF QP for the desired wrench
    swing legs:   τ = Jᵀ (Kp (p_ref − p) + Kd (v_ref − v)) + bias,  p_ref on the swing trajectory
                  from the lift-off point to the foothold
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from canter.control.centroidal import BodyController, BodyControllerCfg, desired_wrench, world_inertia
from canter.control.gait import GaitCfg, GaitScheduler
from canter.control.kinematics import RobotState, forces_to_torques
from canter.control.robot import Quadruped
from canter.control.swing import cartesian_pd, swing_trajectory
from canter.core import selection
from canter.core.errors import ConfigError
from canter.core.validate import Validated, fail, require_at_least


@dataclass(kw_only=True)
class SwingCfg(Validated):
    """apex: clearance above the higher end point at mid-swing, m. kp, kd: Cartesian PD gains
    (N/m, N·s/m) per world axis. bias_compensation: add each leg's joint-space gravity and Coriolis
    torques (MuJoCo's qfrc_bias) to its torques, so that a stance foot pushes on the ground with the
    QP's force rather than that force plus the leg's own weight."""

    apex: float = 0.07
    kp: tuple[float, float, float] = (1000.0, 1000.0, 1000.0)
    kd: tuple[float, float, float] = (25.0, 25.0, 25.0)
    bias_compensation: bool = True

    config_name = "swing"

    def validate(self) -> None:
        require_at_least(self, "apex", 0.0)
        if min(self.kp) < 0 or min(self.kd) < 0:
            raise fail("kp", f"gains kp, kd must be >= 0, got {self.kp}, {self.kd}")


@dataclass(kw_only=True)
class LowLevelCfg:
    gait: GaitCfg = field(default_factory=GaitCfg)
    swing: SwingCfg = field(default_factory=SwingCfg)
    body: BodyControllerCfg = field(default_factory=BodyControllerCfg)


@dataclass
class Targets:
    """High-level targets of one tick, world frame: acc_lin (B, 3) m/s², acc_ang (B, 3) rad/s² of the
    CoM / trunk; phase_speed (B,) multiplier of the gait frequency; footholds (B, 4, 3) m, the points
    the swing feet (sphere centres) land on."""

    acc_lin: torch.Tensor
    acc_ang: torch.Tensor
    phase_speed: torch.Tensor
    footholds: torch.Tensor


class LowLevelController:
    """Gait phases, lift-off points and QP warm starts of `num_envs` envs, and the torque law.

    stance: (B, 4) bool schedule of the current tick. liftoff: (B, 4, 3) where each foot left the
    ground (its swing start), m. forces: (B, 4, 3) last stance forces, N.
    """

    def __init__(self, cfg: LowLevelCfg, robot: Quadruped, num_envs: int, device: torch.device, dtype: torch.dtype):
        if len(cfg.gait.offsets) != robot.num_legs:
            raise ConfigError(f"gait.offsets: need one per leg ({robot.num_legs}), got {cfg.gait.offsets}")
        self.cfg = cfg
        self.robot = robot
        self.gait = GaitScheduler(cfg.gait, num_envs, device, dtype)
        self.body = BodyController(cfg.body, num_envs, device, dtype)
        self.kp = torch.tensor(cfg.swing.kp, dtype=dtype, device=device)
        self.kd = torch.tensor(cfg.swing.kd, dtype=dtype, device=device)
        self.liftoff = torch.zeros(num_envs, robot.num_legs, 3, dtype=dtype, device=device)

    @property
    def stance(self) -> torch.Tensor:
        """(B, 4) bool: the legs in stance at the gait's current phase."""
        return self.gait.stance

    def compute(
        self, state: RobotState, targets: Targets, dt: float, bias: torch.Tensor | None = None
    ) -> torch.Tensor:
        """Advance the gait by dt seconds and return the joint torques (B, 4, 3) in N·m (clamped to
        the torque limits) for the coming tick. bias: (B, 4, 3) joint bias forces (qfrc_bias) for the
        swing legs' compensation, or None."""
        was_stance = self.gait.stance
        self.gait.advance(dt, targets.phase_speed)
        stance = self.gait.stance
        lifted = was_stance & ~stance
        self.liftoff.copy_(torch.where(lifted[..., None], state.foot_pos, self.liftoff))

        # swing: track the trajectory from lift-off to the foothold; ds/dt = f speed / (1 − duty)
        progress = self.gait.swing_progress
        reference, d_ds = swing_trajectory(self.liftoff, targets.footholds, self.cfg.swing.apex, progress)
        rate = self.gait.cfg.frequency * self.gait.speed / (1.0 - self.gait.cfg.duty_factor)
        force_swing = cartesian_pd(state.foot_pos, state.foot_vel, reference, d_ds * rate[:, None, None], self.kp, self.kd)
        tau_swing = forces_to_torques(state.jacobian, force_swing)

        # stance: desired wrench -> ground reaction forces -> τ = −Jᵀ f
        inertia = world_inertia(state.rot, self.robot.inertia_b)
        wrench = desired_wrench(self.robot.mass, inertia, targets.acc_lin, targets.acc_ang, state.ang_vel)
        forces = self.body.solve(state.foot_pos - state.com[:, None, :], stance, wrench)
        tau_stance = -forces_to_torques(state.jacobian, forces)

        torque = torch.where(stance[..., None], tau_stance, tau_swing)
        if bias is not None and self.cfg.swing.bias_compensation:
            torque = torque + bias
        limit = self.robot.torque_limit
        return torch.maximum(torch.minimum(torque, limit), -limit)

    def reset(self, env_ids: torch.Tensor, foot_pos: torch.Tensor) -> None:
        """Restart the gait of the selection `env_ids` (indices or a mask, canter.core.selection) at phase 0
        with lift-off points at foot_pos (rows(env_ids), 4, 3)."""
        self.gait.reset(env_ids)
        self.body.reset(env_ids)
        selection.put(self.liftoff, env_ids, foot_pos)

    def state_dict(self) -> dict[str, torch.Tensor]:
        state = {"liftoff": self.liftoff.clone()}
        state.update({f"gait/{k}": v for k, v in self.gait.state_dict().items()})
        state.update({f"body/{k}": v for k, v in self.body.state_dict().items()})
        return state

    def load_state_dict(self, state: dict[str, torch.Tensor]) -> None:
        self.liftoff.copy_(state["liftoff"])
        self.gait.load_state_dict({k[5:]: v for k, v in state.items() if k.startswith("gait/")})
        self.body.load_state_dict({k[5:]: v for k, v in state.items() if k.startswith("body/")})
