"""A hierarchical action: the policy drives a quadruped's low-level controller (canter.control) at
the policy rate; the controller turns its targets into joint torques at the controller rate.

Action layout (15, each nominally in [-1, 1]):
    0:3   CoM target acceleration (x, y, z), heading frame, × acc_lin_scale m/s²
    3:6   trunk target angular acceleration (roll, pitch, yaw axes), heading frame, × acc_ang_scale rad/s²
    6     gait phase speed: 1 + phase_speed_scale · a (clamped to the gait's speed_range)
    7:15  foothold offsets (x, y) per leg, heading frame, × foothold_scale m
With `heuristic_base` the targets are the heuristic controller's plus these (zero action = the
heuristic controller); without, the accelerations are the action's alone and footholds offset the
shoulders projected to the ground.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import torch

from canter.control.controller import LowLevelCfg, LowLevelController, Targets
from canter.control.heuristic import (
    HeuristicCfg,
    body_feedback,
    ground_height_under,
    raibert_footholds,
    shoulder_xy,
    yaw_frame_to_world,
)
from canter.control.kinematics import RobotState, bind_fields, read_state
from canter.control.robot import Quadruped, QuadrupedCfg
from canter.core import selection
from canter.core.errors import ConfigError
from canter.core.math import yaw_from_quat
from canter.core.validate import fail, require_at_least, require_finite
from canter.managers.action import ActionTerm, ActionTermCfg

if TYPE_CHECKING:
    from canter.envs.manager_env import ManagerBasedRLEnv

ACTION_DIM = 15


@dataclass(kw_only=True)
class QuadrupedControllerActionCfg(ActionTermCfg):
    """physics_steps_per_tick: physics steps per controller tick (controller rate = physics rate / this).
    command_name: the command term (canter.mdp.commands) that gives the commanded (vx, vy) in the
    heading frame, m/s, and yaw rate, rad/s: (num_envs, 3). heading: the trunk's target yaw, rad
    (None: the yaw it has after each reset). clip: (low, high) the actions are clamped to before use;
    None (the default, as `dog-stones` was trained): used as they come, nominally in [-1, 1]."""

    clip: tuple[float, float] | None = None
    physics_steps_per_tick: int = 2
    controller: LowLevelCfg = field(default_factory=LowLevelCfg)
    heuristic: HeuristicCfg = field(default_factory=HeuristicCfg)
    quadruped: QuadrupedCfg = field(default_factory=QuadrupedCfg)
    command_name: str = "base_velocity"
    heading: float | None = 0.0
    heuristic_base: bool = True
    acc_lin_scale: tuple[float, float, float] = (2.0, 2.0, 4.0)
    acc_ang_scale: tuple[float, float, float] = (10.0, 10.0, 10.0)
    phase_speed_scale: float = 0.5
    foothold_scale: float = 0.15

    def validate(self) -> None:
        super().validate()
        require_at_least(self, "physics_steps_per_tick", 1, integer=True)
        require_at_least(self, "foothold_scale", 0.0)
        require_at_least(self, "phase_speed_scale", 0.0)
        if self.heading is not None:
            require_finite(self, "heading")
        for name in ("acc_lin_scale", "acc_ang_scale"):
            values = getattr(self, name)
            if len(values) != 3 or not all(isinstance(v, (int, float)) and v >= 0 for v in values):
                raise fail(name, f"need three numbers >= 0, got {values}")

    def build(self, name: str, env: ManagerBasedRLEnv) -> ActionTerm:
        return QuadrupedControllerAction(name, self, env)


class QuadrupedControllerAction(ActionTerm):
    """The action term that runs `LowLevelController` every `physics_steps_per_tick` physics steps.

    timing: when True, `solver_seconds` / `controller_seconds` accumulate the wall time spent in the
    QP solve and in the whole controller (for benchmarks on the CPU; a host clock, no device sync).
    """

    cfg: QuadrupedControllerActionCfg

    def __init__(self, name: str, cfg: QuadrupedControllerActionCfg, env: ManagerBasedRLEnv):
        super().__init__(name, cfg, env)
        if not env.scene.has_free_root:
            raise ConfigError("QuadrupedControllerAction: the model needs a floating base (a free root joint)")
        command = env.command_manager.get_command(cfg.command_name)
        if command.shape != (env.num_envs, 3):
            raise ConfigError(
                f"actions.{name}.command_name: command {cfg.command_name!r} must be (num_envs, 3) "
                f"(vx, vy, wz), got {tuple(command.shape)}"
            )
        self.action_dim = ACTION_DIM
        self.physics_steps_per_tick = cfg.physics_steps_per_tick
        self.dt = cfg.physics_steps_per_tick * env.sim.timestep
        sim, device, dtype = env.sim, env.device, env.sim.dtype
        bind_fields(sim)
        self.robot = Quadruped(sim.model, cfg.quadruped, device, dtype, qpos=sim.default_qpos.cpu().numpy())
        gear = sim.model.actuator_gear[self.robot.actuator_ids.reshape(-1).cpu().numpy(), 0]
        if (sim.model.actuator_biastype != 0).any() or not (gear == 1.0).all():
            raise ConfigError("QuadrupedControllerAction: actuators must be torque motors (spec edit motor_actuators)")
        self.controller = LowLevelController(cfg.controller, self.robot, env.num_envs, device, dtype)
        self.heading = torch.zeros(env.num_envs, dtype=dtype, device=device)
        self.acc_lin_scale = torch.tensor(cfg.acc_lin_scale, dtype=dtype, device=device)
        self.acc_ang_scale = torch.tensor(cfg.acc_ang_scale, dtype=dtype, device=device)
        self.targets: Targets | None = None
        self.timing = False
        self.solver_seconds = 0.0
        self.controller_seconds = 0.0
        self.reset(torch.arange(env.num_envs, device=device))

    @property
    def command(self) -> torch.Tensor:
        """(num_envs, 3) the commanded (vx, vy) in the heading frame, m/s, and yaw rate, rad/s, in the
        sim dtype: read from the command manager's term `cfg.command_name`."""
        return self.env.command_manager.get_command(self.cfg.command_name).to(self.env.sim.dtype)

    def _ground(self, xy: torch.Tensor) -> torch.Tensor:
        terrain = self.env.terrain
        if terrain is None:
            return torch.zeros(xy.shape[:-1], dtype=xy.dtype, device=xy.device)
        return terrain.height_at(xy)

    def nominal_footholds(self, state: RobotState) -> torch.Tensor:
        """(B, 4, 2) world xy footholds before the policy's offsets: Raibert's with `heuristic_base`,
        else the shoulders projected to the ground."""
        if not self.cfg.heuristic_base:
            return shoulder_xy(state, self.robot)
        velocity_w = yaw_frame_to_world(self.command[:, 0:2], yaw_from_quat(state.quat))
        return raibert_footholds(state, self.controller.gait, self.robot, velocity_w, self.cfg.heuristic)

    def targets_from_action(self, action: torch.Tensor, state: RobotState) -> Targets:
        """The controller targets for `action` (B, 15) at `state` (see the module docs)."""
        cfg, robot, controller = self.cfg, self.robot, self.controller
        yaw = yaw_from_quat(state.quat)
        action = action.to(state.root_pos.dtype)
        if cfg.clip is not None:
            action = action.clamp(cfg.clip[0], cfg.clip[1])
        command = self.command
        velocity_w = yaw_frame_to_world(command[:, 0:2], yaw)
        offsets = yaw_frame_to_world(action[:, 7:15].reshape(-1, 4, 2) * cfg.foothold_scale, yaw)
        xy = self.nominal_footholds(state) + offsets
        footholds = torch.cat((xy, (self._ground(xy) + robot.cfg.foot_radius)[..., None]), dim=-1)
        acc_lin = _heading_to_world(action[:, 0:3] * self.acc_lin_scale, yaw)
        acc_ang = _heading_to_world(action[:, 3:6] * self.acc_ang_scale, yaw)
        if cfg.heuristic_base:
            ground_z = ground_height_under(state, controller.stance, footholds, robot)
            base_lin, base_ang = body_feedback(state, velocity_w, command[:, 2], self.heading, ground_z, cfg.heuristic)
            acc_lin, acc_ang = acc_lin + base_lin, acc_ang + base_ang
        speed = 1.0 + cfg.phase_speed_scale * action[:, 6]
        return Targets(acc_lin=acc_lin, acc_ang=acc_ang, phase_speed=speed, footholds=footholds)

    def apply(self, ctrl: torch.Tensor, action: torch.Tensor) -> None:
        start = time.perf_counter() if self.timing else 0.0
        sim, robot = self.env.sim, self.robot
        state = read_state(sim, robot)
        self.targets = targets = self.targets_from_action(action, state)
        bias = sim.field("qfrc_bias")[:, robot.dof_adr] if self.cfg.controller.swing.bias_compensation else None
        self.controller.body.timing = self.timing
        torque = self.controller.compute(state, targets, self.dt, bias).reshape(-1, 12).to(ctrl.dtype)
        if robot.ctrl_slice is not None:
            ctrl[:, robot.ctrl_slice] = torque
        else:
            ctrl[:, robot.actuator_ids.reshape(-1)] = torque
        if self.timing:
            self.controller_seconds += time.perf_counter() - start
            self.solver_seconds = self.controller.body.solve_seconds

    def export_description(self) -> dict[str, Any]:
        cfg, legs = self.cfg, self.robot.cfg.legs
        added = "added to the heuristic controller's" if cfg.heuristic_base else "the"
        return {
            "kind": "quadruped_controller",
            "actuator_ids": self.robot.actuator_ids.reshape(-1).tolist(),
            "clip": cfg.clip,
            "fields": [
                {"name": "com_acceleration", "columns": [0, 3], "scale": list(cfg.acc_lin_scale), "unit": "m/s^2",
                 "description": f"{added} CoM target acceleration, heading frame (x forward, z up)"},
                {"name": "angular_acceleration", "columns": [3, 6], "scale": list(cfg.acc_ang_scale),
                 "unit": "rad/s^2", "description": f"{added} trunk target angular acceleration (roll, pitch, yaw axes)"},
                {"name": "phase_speed_change", "columns": [6, 7], "scale": [cfg.phase_speed_scale], "unit": "1",
                 "description": "gait phase speed = 1 + this, clamped to the gait's speed_range"},
                {"name": "foothold_offsets", "columns": [7, 15], "scale": [cfg.foothold_scale] * 8, "unit": "m",
                 "description": f"(x, y) per leg ({', '.join(legs)}), heading frame, added to the "
                                f"{'Raibert footholds' if cfg.heuristic_base else 'shoulders projected to the ground'}"},
            ],
            "params": {
                "legs": list(legs), "controller_rate_hz": 1.0 / self.dt, "command": cfg.command_name,
                "heuristic_base": cfg.heuristic_base, "heading": cfg.heading,
                "speed_range": list(self.controller.gait.cfg.speed_range),
                "controller": "centroidal ground-reaction-force QP + swing-leg PD, torque motors (canter.control)",
            },
        }

    def reset(self, env_ids: torch.Tensor) -> None:
        state = read_state(self.env.sim, self.robot)
        self.controller.reset(env_ids, selection.take(state.foot_pos, env_ids))
        if self.cfg.heading is None:
            selection.put(self.heading, env_ids, yaw_from_quat(selection.take(state.quat, env_ids)))
        else:
            selection.fill(self.heading, env_ids, self.cfg.heading)

    def state_dict(self) -> dict[str, torch.Tensor]:
        return {"heading": self.heading.clone(), **{f"controller/{k}": v for k, v in self.controller.state_dict().items()}}

    def load_state_dict(self, state: dict[str, torch.Tensor]) -> None:
        self.heading.copy_(state["heading"])
        self.controller.load_state_dict({k[11:]: v for k, v in state.items() if k.startswith("controller/")})


def _heading_to_world(vec: torch.Tensor, yaw: torch.Tensor) -> torch.Tensor:
    """(B, 3) heading-frame vectors rotated about z into the world frame."""
    return torch.cat((yaw_frame_to_world(vec[:, 0:2], yaw), vec[:, 2:3]), dim=-1)


# --- observation terms ------------------------------------------------------------------------
def _controller(env: ManagerBasedRLEnv, action_name: str) -> QuadrupedControllerAction:
    term = env.action_manager.term(action_name)
    if not isinstance(term, QuadrupedControllerAction):
        raise ConfigError(f"action term {action_name!r} is not a QuadrupedControllerAction")
    return term


def gait_phase(env: ManagerBasedRLEnv, action_name: str = "controller") -> torch.Tensor:
    """(num_envs, 8) sin and cos of each leg's gait phase (2π φ_i)."""
    angle = 2.0 * torch.pi * _controller(env, action_name).controller.gait.leg_phase
    return torch.cat((torch.sin(angle), torch.cos(angle)), dim=1)


def stance_schedule(env: ManagerBasedRLEnv, action_name: str = "controller") -> torch.Tensor:
    """(num_envs, 4) 1 for legs the gait has in stance, else 0."""
    return _controller(env, action_name).controller.stance.to(env.sim.dtype)


def feet_pos_heading(env: ManagerBasedRLEnv, action_name: str = "controller") -> torch.Tensor:
    """(num_envs, 12) foot positions relative to the trunk origin in the heading frame, m."""
    term = _controller(env, action_name)
    foot = env.sim.field("site_xpos")[:, term.robot.foot_site_ids] - env.scene.root_pos_w[:, None, :]
    yaw = yaw_from_quat(env.scene.root_quat_w)
    xy = yaw_frame_to_world(foot[..., 0:2], -yaw)
    return torch.cat((xy, foot[..., 2:3]), dim=-1).reshape(env.num_envs, 12)


def nominal_footholds_heading(env: ManagerBasedRLEnv, action_name: str = "controller") -> torch.Tensor:
    """(num_envs, 8) the footholds the controller plans before the policy's offsets (Raibert's),
    relative to the trunk origin in the heading frame, xy per leg, m."""
    term = _controller(env, action_name)
    xy = term.nominal_footholds(read_state(env.sim, term.robot)) - env.scene.root_pos_w[:, None, 0:2]
    return yaw_frame_to_world(xy, -yaw_from_quat(env.scene.root_quat_w)).reshape(env.num_envs, 8)


def foothold_scan(
    env: ManagerBasedRLEnv, action_name: str = "controller", span: float = 0.2, resolution: float = 0.05,
    offset: float = 0.28, clip: tuple[float, float] = (-1.0, 1.0),
) -> torch.Tensor:
    """(num_envs, 4 k) terrain around each planned foothold: k = 2 round(span / resolution) + 1 points
    along the heading from −span to +span, each base_z − ground − offset (a gap reads high)."""
    term = _controller(env, action_name)
    xy = term.nominal_footholds(read_state(env.sim, term.robot))
    count = 2 * round(span / resolution) + 1
    along = torch.linspace(-span, span, count, dtype=xy.dtype, device=xy.device)
    yaw = yaw_from_quat(env.scene.root_quat_w)
    step = torch.stack((torch.cos(yaw), torch.sin(yaw)), dim=-1)  # (B, 2) heading direction
    points = xy[:, :, None, :] + along[None, None, :, None] * step[:, None, None, :]
    scan = env.scene.root_pos_w[:, 2, None, None] - term._ground(points) - offset
    return scan.clamp(*clip).reshape(env.num_envs, 4 * count)
