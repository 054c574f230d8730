"""Cartesian end-effector deltas for the arm, turned into joint position targets by a batched damped
least-squares differential IK in torch; one more action opens and closes the gripper.

Action layout (5, each nominally in [-1, 1]), once per control step:
    0:3  tcp displacement (x, y, z), world frame, x position_scale m
    3    gripper yaw change about the vertical, x yaw_scale rad
    4    gripper: > 0 closes it, <= 0 opens it (binary, as a real parallel gripper's command)

Each step the target pose is the tcp's current pose plus the delta (position clamped to the
workspace box), with the approach axis pointing straight down. The 6-D pose error e (position; the
orientation error 0.5 sum_i x_i x x_i^des over the frame axes) gives dq = J^T (J J^T + lambda^2 I)^-1 e
and the arm's position servos get q + dq. The Jacobian is the geometric one of a chain of hinges,
column i = (a_i x (p - o_i), a_i) with a_i, o_i each joint's world axis and anchor (MjData xaxis,
xanchor): the same torch code on both backends, no per-env call into the simulator.

The servos start each step with the whole delta ahead of them and damp absolute joint velocity
(force = kp (q_target - q) - kv qd), so at a steady speed the tcp covers about 60-70 % of each
step's commanded delta (kp / kv = 20 /s for the big joints; measured 9.4 cm over 10 steps of +1 in
x); a held action of 0 stops it within a step. Closed-loop controllers (the expert, a policy) do not
care; scripts that need exact displacements iterate until the error is small.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import mujoco
import torch

from canter.core.errors import ConfigError
from canter.managers.action import ActionTerm, ActionTermCfg
from canter.scene.entity import Sel, actuators

if TYPE_CHECKING:
    from canter.envs.manager_env import ManagerBasedRLEnv

ACTION_DIM = 5


@dataclass(kw_only=True)
class EndEffectorDeltaActionCfg(ActionTermCfg):
    """arm: the six arm position actuators (hinge joints, base to hand). fingers: the finger
    position actuators, all given the same target. site: the tool centre point.
    position_scale: m per unit action; yaw_scale: rad per unit action. damping: lambda of the
    damped least squares (m or rad). workspace_low/high: world box the tcp target is clamped to, m.
    max_rotation_error: orientation errors are clipped to this norm, rad (slow re-orientation).
    gripper_open/closed: finger targets, m (closed below 0 so the fingers squeeze)."""

    clip: tuple[float, float] | None = (-1.0, 1.0)
    arm: Sel = field(default_factory=lambda: actuators("shoulder_pan", "shoulder_lift", "elbow", "wrist_.*"))
    fingers: Sel = field(default_factory=lambda: actuators("finger_.*"))
    site: str = "tcp"
    position_scale: float = 0.015
    yaw_scale: float = 0.15
    damping: float = 0.05
    workspace_low: tuple[float, float, float] = (0.2, -0.4, 0.422)
    workspace_high: tuple[float, float, float] = (0.8, 0.4, 0.9)
    max_rotation_error: float = 0.5
    gripper_open: float = 0.04
    gripper_closed: float = -0.01

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.position_scale <= 0 or self.yaw_scale < 0 or self.damping < 0:
            raise ConfigError("actions: position_scale must be > 0, yaw_scale and damping >= 0")
        if any(lo >= hi for lo, hi in zip(self.workspace_low, self.workspace_high, strict=True)):
            raise ConfigError(f"actions.workspace: low {self.workspace_low} must be < high {self.workspace_high}")

    def build(self, name: str, env: ManagerBasedRLEnv) -> ActionTerm:
        return EndEffectorDeltaAction(name, self, env)


class EndEffectorDeltaAction(ActionTerm):
    """The differential-IK action term (see the module docstring). Stateless between steps."""

    def __init__(self, name: str, cfg: EndEffectorDeltaActionCfg, env: ManagerBasedRLEnv):
        self.name = name
        self.cfg = cfg
        self.env = env
        self.action_dim = ACTION_DIM
        model, scene, device, dtype = env.sim.model, env.scene, env.device, env.sim.dtype
        arm, fingers = cfg.arm.resolve(scene), cfg.fingers.resolve(scene)
        if arm.count != 6:
            raise ConfigError(f"actions.arm: the IK needs 6 arm actuators, got {arm.count} ({', '.join(arm.names)})")
        joint_ids = [int(model.actuator_trnid[i, 0]) for i in arm.ids.tolist()]
        if any(int(model.jnt_type[j]) != int(mujoco.mjtJoint.mjJNT_HINGE) for j in joint_ids):
            raise ConfigError("actions.arm: every arm actuator must drive a hinge joint")
        site_names = scene.names("site")
        if cfg.site not in site_names:
            raise ConfigError(f"actions.site: the model has no site {cfg.site!r} (have: {', '.join(site_names)})")
        self.site_id = site_names.index(cfg.site)
        self.arm_ctrl = arm.ids
        self.finger_ctrl = fingers.ids
        self.joint_ids = torch.tensor(joint_ids, dtype=torch.long, device=device)
        self.qpos_adr = torch.tensor([int(model.jnt_qposadr[j]) for j in joint_ids], device=device)
        ctrlrange = torch.as_tensor(model.actuator_ctrlrange[arm.ids.tolist()], dtype=dtype).to(device)
        self.q_low, self.q_high = ctrlrange[:, 0], ctrlrange[:, 1]
        self.workspace_low = torch.tensor(cfg.workspace_low, dtype=dtype, device=device)
        self.workspace_high = torch.tensor(cfg.workspace_high, dtype=dtype, device=device)
        self.eye = torch.eye(6, dtype=dtype, device=device)
        self.gripper_open = torch.tensor(cfg.gripper_open, dtype=dtype, device=device)
        self.gripper_closed = torch.tensor(cfg.gripper_closed, dtype=dtype, device=device)
        # derived fields are bound now, before the env's first forward, so they are filled from then on
        for name_ in ("xaxis", "xanchor", "site_xpos", "site_xmat"):
            env.sim.field(name_)

    def apply(self, ctrl: torch.Tensor, action: torch.Tensor) -> None:
        cfg = self.cfg
        if cfg.clip is not None:
            action = action.clamp(cfg.clip[0], cfg.clip[1])
        sim = self.env.sim
        tcp = sim.field("site_xpos")[:, self.site_id]
        rotation = sim.field("site_xmat")[:, self.site_id].reshape(-1, 3, 3)
        target = torch.maximum(torch.minimum(tcp + cfg.position_scale * action[:, 0:3], self.workspace_high), self.workspace_low)
        yaw = tcp_yaw(rotation) + cfg.yaw_scale * action[:, 3]
        error = torch.cat((target - tcp, _rotation_error(rotation, _down_frame(yaw), cfg.max_rotation_error)), dim=1)
        jacobian = hinge_jacobian(sim.field("xaxis")[:, self.joint_ids], sim.field("xanchor")[:, self.joint_ids], tcp)
        # dq = J^T (J J^T + lambda^2 I)^-1 e
        gram = jacobian @ jacobian.transpose(1, 2) + cfg.damping**2 * self.eye
        dq = (jacobian.transpose(1, 2) @ torch.linalg.solve_ex(gram, error.unsqueeze(2))[0]).squeeze(2)
        q = sim.qpos[:, self.qpos_adr]
        ctrl[:, self.arm_ctrl] = torch.clamp(q + dq, self.q_low, self.q_high).to(ctrl.dtype)
        # binary: a student's 0.3 closes the gripper as firmly as the expert's 1.0
        fingers = torch.where(action[:, 4:5] > 0.0, self.gripper_closed, self.gripper_open)
        ctrl[:, self.finger_ctrl] = fingers.expand(-1, self.finger_ctrl.numel()).to(ctrl.dtype)

    def export_description(self) -> dict[str, Any]:
        cfg = self.cfg
        return {
            "kind": "ee_delta",
            "actuator_ids": [*self.arm_ctrl.tolist(), *self.finger_ctrl.tolist()],
            "clip": cfg.clip,
            "fields": [
                {"name": "tcp_displacement", "columns": [0, 3], "scale": [cfg.position_scale] * 3, "unit": "m",
                 "description": f"move the tool centre point (site {cfg.site!r}) by this much along the world's "
                                "x, y, z; the target is clamped to the workspace box"},
                {"name": "yaw_change", "columns": [3, 4], "scale": [cfg.yaw_scale], "unit": "rad",
                 "description": "turn the gripper about the vertical by this much, its approach axis pointing down"},
                {"name": "gripper_close", "columns": [4, 5], "threshold": 0.0, "unit": "bool",
                 "description": "close the gripper (True) or open it (False)"},
            ],
            "params": {
                "site": cfg.site, "frame": "world", "workspace_low": list(cfg.workspace_low),
                "workspace_high": list(cfg.workspace_high), "ik": "damped least squares, position servos",
                "damping": cfg.damping, "max_rotation_error": cfg.max_rotation_error,
                "gripper_open": cfg.gripper_open, "gripper_closed": cfg.gripper_closed,
                "arm_actuators": int(self.arm_ctrl.numel()), "finger_actuators": int(self.finger_ctrl.numel()),
            },
        }


def hinge_jacobian(axis: torch.Tensor, anchor: torch.Tensor, point: torch.Tensor) -> torch.Tensor:
    """(N, 6, k) geometric Jacobian of a world point on the last link of a chain of k hinges: rows 0:3
    linear (a_i x (p - o_i)), rows 3:6 angular (a_i). axis, anchor: (N, k, 3); point: (N, 3)."""
    linear = torch.linalg.cross(axis, point.unsqueeze(1) - anchor, dim=2)
    return torch.cat((linear, axis), dim=2).transpose(1, 2)


def tcp_yaw(rotation: torch.Tensor) -> torch.Tensor:
    """(N,) heading of the frame's x axis (the gripper's opening direction) in the world xy plane, rad.
    rotation: (N, 3, 3), columns the frame's axes in the world."""
    return torch.atan2(rotation[:, 1, 0], rotation[:, 0, 0])


def _down_frame(yaw: torch.Tensor) -> torch.Tensor:
    """(N, 3, 3) rotation whose z axis points down and whose x axis has heading `yaw`."""
    cos, sin, zero = torch.cos(yaw), torch.sin(yaw), torch.zeros_like(yaw)
    x = torch.stack((cos, sin, zero), dim=1)
    y = torch.stack((sin, -cos, zero), dim=1)  # z x x with z = (0, 0, -1)
    z = torch.stack((zero, zero, -torch.ones_like(yaw)), dim=1)
    return torch.stack((x, y, z), dim=2)


def _rotation_error(current: torch.Tensor, desired: torch.Tensor, max_norm: float) -> torch.Tensor:
    """(N, 3) axis-angle-like error rotating `current` towards `desired`, 0.5 sum_i c_i x d_i over the
    frames' axes (exact direction, |e| = sin(angle) for small angles), clipped to norm max_norm."""
    error = 0.5 * torch.linalg.cross(current, desired, dim=1).sum(dim=2)
    norm = error.norm(dim=1, keepdim=True)
    return error * torch.clamp(max_norm / norm.clamp_min(1e-9), max=1.0)
