"""What the low-level controller needs to know about a quadruped, resolved once from its MjModel.

Legs are ordered as `QuadrupedCfg.legs` (default FR, FL, RR, RL, Canter dog's order); each leg has
three hinge joints (hip abduction, thigh, calf) driven by one actuator each, and a foot site.
`motor_actuators` is the spec edit that turns the dog's position servos into torque motors.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np
import torch

from canter.core.errors import ConfigError

LEGS: tuple[str, ...] = ("FR", "FL", "RR", "RL")


def motor_actuators(spec: mujoco.MjSpec) -> None:
    """Spec edit: every actuator becomes a torque motor (gain 1, no bias) whose control range is the
    force range it had (its torque limit), so ctrl is the joint torque in N·m."""
    for actuator in spec.actuators:
        low, high = (float(v) for v in actuator.forcerange)
        if not low < high:
            raise ConfigError(f"actuator {actuator.name!r} has no force range to become a torque limit")
        actuator.set_to_motor()
        actuator.ctrlrange = [low, high]
        actuator.ctrllimited = mujoco.mjtLimited.mjLIMITED_TRUE


@dataclass(kw_only=True)
class QuadrupedCfg:
    """Names in the MJCF, formatted with the leg prefix (e.g. "{leg}_foot_site" -> "FR_foot_site").

    trunk: the floating-base body. foot_site: a site at the centre of the foot sphere.
    shoulder_body: the body whose origin is the nominal foothold above which the foot stands.
    joints: the three joints of a leg, proximal to distal, each driven by one actuator.
    foot_radius: the foot sphere's radius, m (target footholds are its centre, this far above ground).
    """

    legs: tuple[str, ...] = LEGS
    trunk: str = "trunk"
    foot_site: str = "{leg}_foot_site"
    shoulder_body: str = "{leg}_thigh"
    joints: tuple[str, str, str] = ("{leg}_hip_joint", "{leg}_thigh_joint", "{leg}_calf_joint")
    foot_radius: float = 0.022


class Quadruped:
    """Index tensors and constants of one quadruped model, on `device` in `dtype`.

    joint_ids: (4, 3) MuJoCo joint ids; dof_adr, qpos_adr: (4, 3) their qvel / qpos addresses.
    actuator_ids: (4, 3) the actuator driving each joint; torque_limit: (4, 3) N·m.
    foot_site_ids: (4,); shoulder_body_ids: (4,); trunk_id: int.
    mass: total mass, kg. inertia_b: (3, 3) whole-body inertia about the CoM in the trunk frame at
    the default pose (the single-rigid-body model's inertia), kg m².
    shoulder_offset_b: (4, 3) shoulder positions in the trunk frame, m.
    """

    def __init__(
        self, model: mujoco.MjModel, cfg: QuadrupedCfg, device: torch.device, dtype: torch.dtype,
        qpos: np.ndarray | None = None,
    ):
        self.cfg = cfg
        self.num_legs = len(cfg.legs)
        if self.num_legs != 4:
            raise ConfigError(f"quadruped.legs: need 4 legs, got {cfg.legs}")
        joint_ids = [[_id(model, mujoco.mjtObj.mjOBJ_JOINT, j.format(leg=leg)) for j in cfg.joints] for leg in cfg.legs]
        for row in joint_ids:
            for jid in row:
                if int(model.jnt_type[jid]) != int(mujoco.mjtJoint.mjJNT_HINGE):
                    raise ConfigError(f"quadruped: joint {model.joint(jid).name!r} is not a hinge")
        driver = {int(model.actuator_trnid[a, 0]): a for a in range(model.nu)}
        missing = [model.joint(j).name for row in joint_ids for j in row if j not in driver]
        if missing:
            raise ConfigError(f"quadruped: no actuator drives joint(s) {', '.join(missing)}")
        as_long = {"dtype": torch.long, "device": device}
        self.joint_ids = torch.tensor(joint_ids, **as_long)
        self.dof_adr = torch.tensor(model.jnt_dofadr[joint_ids], **as_long)
        self.qpos_adr = torch.tensor(model.jnt_qposadr[joint_ids], **as_long)
        self.actuator_ids = torch.tensor([[driver[j] for j in row] for row in joint_ids], **as_long)
        limits = np.abs(model.actuator_ctrlrange[self.actuator_ids.cpu().numpy()]).min(axis=-1)
        self.torque_limit = torch.tensor(limits, dtype=dtype, device=device)
        self.foot_site_ids = torch.tensor(
            [_id(model, mujoco.mjtObj.mjOBJ_SITE, cfg.foot_site.format(leg=leg)) for leg in cfg.legs], **as_long
        )
        self.shoulder_body_ids = torch.tensor(
            [_id(model, mujoco.mjtObj.mjOBJ_BODY, cfg.shoulder_body.format(leg=leg)) for leg in cfg.legs], **as_long
        )
        self.trunk_id = _id(model, mujoco.mjtObj.mjOBJ_BODY, cfg.trunk)
        mass, inertia, shoulders = _rigid_body_constants(model, self.trunk_id, self.shoulder_body_ids.tolist(), qpos)
        self.mass = mass
        self.inertia_b = torch.tensor(inertia, dtype=dtype, device=device)
        self.shoulder_offset_b = torch.tensor(shoulders, dtype=dtype, device=device)
        # the actuators in (leg, joint) order are usually ctrl[0:12]: write a slice then
        flat = self.actuator_ids.reshape(-1).tolist()
        self.ctrl_slice = slice(flat[0], flat[0] + 12) if flat == list(range(flat[0], flat[0] + 12)) else None


def _id(model: mujoco.MjModel, kind: mujoco.mjtObj, name: str) -> int:
    index = mujoco.mj_name2id(model, kind, name)
    if index < 0:
        raise ConfigError(f"quadruped: the model has no {kind.name[6:].lower()} named {name!r}")
    return int(index)


def _rigid_body_constants(
    model: mujoco.MjModel, trunk: int, shoulders: list[int], qpos: np.ndarray | None
) -> tuple[float, np.ndarray, np.ndarray]:
    """Total mass, whole-body inertia about the CoM (trunk frame) and shoulder positions (trunk
    frame) at configuration `qpos` (default: the first keyframe, else qpos0)."""
    data = mujoco.MjData(model)
    if qpos is not None:
        data.qpos[:] = qpos
    elif model.nkey > 0:
        data.qpos[:] = model.key_qpos[0]
    mujoco.mj_forward(model, data)
    bodies = [b for b in range(1, model.nbody) if _descends(model, b, trunk)]
    mass = float(model.body_mass[bodies].sum())
    com = (model.body_mass[bodies, None] * data.xipos[bodies]).sum(axis=0) / mass
    inertia = np.zeros((3, 3))
    for b in bodies:
        rot = data.ximat[b].reshape(3, 3)
        r = data.xipos[b] - com
        # I = R diag(I_b) Rᵀ + m (|r|² 1 − r rᵀ)  (parallel axis theorem)
        inertia += rot @ np.diag(model.body_inertia[b]) @ rot.T + model.body_mass[b] * (r @ r * np.eye(3) - np.outer(r, r))
    trunk_rot = data.xmat[trunk].reshape(3, 3)
    shoulder_b = (data.xpos[shoulders] - data.xpos[trunk]) @ trunk_rot
    return mass, trunk_rot.T @ inertia @ trunk_rot, shoulder_b


def _descends(model: mujoco.MjModel, body: int, ancestor: int) -> bool:
    while body > 0:
        if body == ancestor:
            return True
        body = int(model.body_parentid[body])
    return False
