"""Terms of the grasping task (canter/assets/arm_grasp.xml): the tcp, the sphere and the distractors,
grasp and lift rewards, the success criterion (sphere lifted >= 10 cm above the table for 1 s) and
the placement of the objects on the table at reset.

Positions come from MjData's body and site poses (`xpos`, `site_xpos`), world frame, m; the task runs
with SimCfg.sensor_stage="current", so they describe the state after the last physics step.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch

from canter.core import selection
from canter.core.errors import ConfigError
from canter.core.math import quat_from_yaw
from canter.managers.term import ManagerTerm, TermCfg
from canter.scene.entity import Resolved, Sel, bodies, joints, sensors

if TYPE_CHECKING:
    from canter.envs.manager_env import ManagerBasedRLEnv

TABLE_TOP = 0.40  # m, height of the table's top face in arm_grasp.xml (the arm's base stands on it)
SPHERE_RADIUS = 0.02  # m

SPHERE = bodies("sphere")
DISTRACTORS = bodies("box_blue", "cylinder_green", "box_yellow")
OBJECTS = bodies("sphere", "box_blue", "cylinder_green", "box_yellow")  # model order: sphere first
TCP = Sel(kind="site", names=("tcp",))
FINGER_TOUCH = sensors("finger_left_touch", "finger_right_touch")
FINGER_JOINTS = joints("finger_left", "finger_right")
ARM_JOINTS = joints("shoulder_pan", "shoulder_lift", "elbow", "wrist_pitch", "wrist_roll", "wrist_rotate")

# placement grid on the table (x rows, y columns), m: each object gets its own cell, then a jitter
SLOT_X = (0.38, 0.50, 0.62)
SLOT_Y = (-0.15, 0.0, 0.15)


# --- poses --------------------------------------------------------------------------------------
def tcp_position(env: ManagerBasedRLEnv, site: Resolved) -> torch.Tensor:
    """(num_envs, 3) world position of the tool centre point, m."""
    return env.sim.field("site_xpos")[:, site.id_list[0]]


def body_positions(env: ManagerBasedRLEnv, bodies: Resolved) -> torch.Tensor:
    """(num_envs, k, 3) world positions of the selected bodies, m."""
    return env.sim.field("xpos")[:, bodies.ids]


def sphere_height(env: ManagerBasedRLEnv, sphere: Resolved) -> torch.Tensor:
    """(num_envs,) height of the sphere's lowest point above the table top, m (0 when resting)."""
    return body_positions(env, sphere)[:, 0, 2] - TABLE_TOP - SPHERE_RADIUS


def finger_forces(env: ManagerBasedRLEnv, sensors: Resolved) -> torch.Tensor:
    """(num_envs, 2) normal force on each finger pad (touch sensors), N."""
    return env.sim.sensordata[:, sensors.data_adr]


def is_grasped(
    env: ManagerBasedRLEnv, sphere: Resolved, site: Resolved, sensors: Resolved, force: float = 1.0, distance: float = 0.02
) -> torch.Tensor:
    """(num_envs,) bool: both pads press with more than `force` N and the sphere's centre lies
    within `distance` m of the tcp (between the fingers)."""
    pressed = (finger_forces(env, sensors) > force).all(dim=1)
    near = (body_positions(env, sphere)[:, 0] - tcp_position(env, site)).norm(dim=1) < distance
    return pressed & near


# --- observations -------------------------------------------------------------------------------
def tcp_pos_b(env: ManagerBasedRLEnv, site: Resolved) -> torch.Tensor:
    """(num_envs, 3) tcp position relative to the arm's base (x, y in the world, z above the table), m."""
    relative = tcp_position(env, site).clone()  # x, y unchanged; no origin tensor built from host data
    relative[:, 2] -= TABLE_TOP
    return relative


def tcp_heading(env: ManagerBasedRLEnv, site: Resolved) -> torch.Tensor:
    """(num_envs, 2) cos and sin of the gripper's yaw (heading of the tcp's x axis)."""
    xmat = env.sim.field("site_xmat")[:, site.id_list[0]]  # row-major: [0] = x_x, [3] = x_y
    yaw = torch.atan2(xmat[:, 3], xmat[:, 0])
    return torch.stack((torch.cos(yaw), torch.sin(yaw)), dim=1)


def gripper_opening(env: ManagerBasedRLEnv, fingers: Resolved) -> torch.Tensor:
    """(num_envs, 1) gap between the finger pads, m (sum of the finger joints)."""
    return env.sim.qpos[:, fingers.qpos_adr].sum(dim=1, keepdim=True)


def bodies_rel_tcp(env: ManagerBasedRLEnv, bodies: Resolved, site: Resolved) -> torch.Tensor:
    """(num_envs, 3 k) positions of the selected bodies minus the tcp's, world frame, m."""
    return (body_positions(env, bodies) - tcp_position(env, site).unsqueeze(1)).flatten(1)


def finger_contact(env: ManagerBasedRLEnv, sensors: Resolved, force: float = 1.0) -> torch.Tensor:
    """(num_envs, 2) 1 where a finger pad presses with more than `force` N."""
    return (finger_forces(env, sensors) > force).to(env.sim.dtype)


# --- rewards ------------------------------------------------------------------------------------
def reach(env: ManagerBasedRLEnv, sphere: Resolved, site: Resolved, std: float = 0.1) -> torch.Tensor:
    """1 - tanh(|sphere - tcp| / std): 1 at the sphere, ~0.24 at std metres."""
    distance = (body_positions(env, sphere)[:, 0] - tcp_position(env, site)).norm(dim=1)
    return 1.0 - torch.tanh(distance / std)


def grasp(env: ManagerBasedRLEnv, sphere: Resolved, site: Resolved, sensors: Resolved) -> torch.Tensor:
    """1 while the sphere is held between both pads (see is_grasped)."""
    return is_grasped(env, sphere, site, sensors).float()


def lift(
    env: ManagerBasedRLEnv, sphere: Resolved, site: Resolved, sensors: Resolved, height: float = 0.10
) -> torch.Tensor:
    """While grasped: the sphere's height above the table / `height`, clipped to [0, 1]."""
    raised = (sphere_height(env, sphere) / height).clamp(0.0, 1.0)
    return raised * is_grasped(env, sphere, site, sensors)


class SuccessBonus(ManagerTerm):
    """1 on the step the termination term `term` fired (the success criterion was met)."""

    def __init__(self, cfg: TermCfg, env: ManagerBasedRLEnv):
        super().__init__(cfg, env)
        names = env.termination_manager.names
        term = cfg.params.get("term", "success")
        if term not in names:
            raise ConfigError(f"reward SuccessBonus: no termination term {term!r} (have: {', '.join(names)})")
        self.index = names.index(term)

    def __call__(self, env: ManagerBasedRLEnv, term: str = "success", **params: Any) -> torch.Tensor:
        return env.termination_manager.term_dones[self.index].float()


# --- terminations -------------------------------------------------------------------------------
class SphereLiftedAndHeld(ManagerTerm):
    """Success: the sphere's lowest point stayed >= `height` m above the table top for `hold_s`
    seconds of consecutive env steps. `held_s` (num_envs,) counts that time; it restarts at 0
    whenever the sphere is lower, so each new episode (sphere back on the table) starts from 0."""

    def __init__(self, cfg: TermCfg, env: ManagerBasedRLEnv):
        super().__init__(cfg, env)
        self.held_s = torch.zeros(env.num_envs, dtype=env.sim.dtype, device=env.device)

    def __call__(
        self, env: ManagerBasedRLEnv, sphere: Resolved, height: float = 0.10, hold_s: float = 1.0, **params: Any
    ) -> torch.Tensor:
        lifted = sphere_height(env, sphere) >= height
        # in place: state carried between steps keeps its storage (a captured env step reads it there)
        self.held_s.copy_(torch.where(lifted, self.held_s + env.step_dt, torch.zeros_like(self.held_s)))
        return self.held_s >= hold_s - 1e-6

    def reset(self, env_ids: torch.Tensor) -> None:
        selection.fill(self.held_s, env_ids, 0.0)

    def state_dict(self) -> dict[str, torch.Tensor]:
        return {"held_s": self.held_s.clone()}


def sphere_off_table(env: ManagerBasedRLEnv, sphere: Resolved, margin: float = 0.05) -> torch.Tensor:
    """The sphere's centre dropped more than `margin` m below the table top (it fell off)."""
    return body_positions(env, sphere)[:, 0, 2] < TABLE_TOP - margin


# --- events -------------------------------------------------------------------------------------
class ResetObjects(ManagerTerm):
    """Place the objects on the table: each env draws distinct cells of the SLOT_X x SLOT_Y grid (one per
    object), a jitter of U(-jitter, jitter) m in x and y, a yaw of U(-pi, pi) for every object but the
    sphere, and drops them from their resting height (the default keyframe's) + 1 mm, at rest."""

    def __init__(self, cfg: TermCfg, env: ManagerBasedRLEnv):
        super().__init__(cfg, env)
        model, device, dtype = env.sim.model, env.device, env.sim.dtype
        objects: Resolved = cfg.params["objects"].resolve(env.scene)
        body_ids = objects.ids.tolist()
        joint_ids = [int(model.body_jntadr[b]) for b in body_ids]
        qpos = [int(model.jnt_qposadr[j]) for j in joint_ids]
        dofs = [int(model.jnt_dofadr[j]) for j in joint_ids]
        self.count = len(body_ids)
        self.qpos_adr = torch.tensor([[a + i for i in range(7)] for a in qpos], device=device).flatten()
        self.dof_adr = torch.tensor([[a + i for i in range(6)] for a in dofs], device=device).flatten()
        self.rest_z = env.scene.default_qpos[torch.tensor(qpos, device=device) + 2] + 0.001
        grid_x, grid_y = torch.meshgrid(torch.tensor(SLOT_X), torch.tensor(SLOT_Y), indexing="ij")
        self.slots = torch.stack((grid_x.flatten(), grid_y.flatten()), dim=1).to(device=device, dtype=dtype)
        self.spins = torch.tensor([b != body_ids[0] for b in body_ids], dtype=dtype, device=device)

    def __call__(
        self, env: ManagerBasedRLEnv, env_ids: torch.Tensor, objects: Resolved, jitter: float = 0.015, **params: Any
    ) -> None:
        n, k, gen, dtype = selection.rows(env_ids), self.count, env.generator, env.sim.dtype
        cells = torch.rand(n, self.slots.shape[0], generator=gen, device=env.device).argsort(dim=1)[:, :k]
        xy = self.slots[cells] + (2.0 * torch.rand(n, k, 2, generator=gen, device=env.device) - 1.0).to(dtype) * jitter
        yaw = (2.0 * torch.rand(n, k, generator=gen, device=env.device) - 1.0).to(dtype) * torch.pi * self.spins
        pose = torch.cat((xy, self.rest_z.expand(n, k).unsqueeze(2), quat_from_yaw(yaw)), dim=2)
        selection.put(env.sim.qpos, env_ids, pose.flatten(1), self.qpos_adr)
        selection.put(env.sim.qvel, env_ids, env.sim.qvel.new_zeros(n, self.dof_adr.numel()), self.dof_adr)


# --- metrics ------------------------------------------------------------------------------------
def grasp_metrics(env: Any) -> dict[str, torch.Tensor]:
    """Per-step quantities `canter eval` averages: the sphere's height above the table (m) and
    whether it is grasped (0/1)."""
    scene = env.scene
    sphere, site, touch = SPHERE.resolve(scene), TCP.resolve(scene), FINGER_TOUCH.resolve(scene)
    return {
        "sphere_height_m": sphere_height(env, sphere).float(),
        "grasped": is_grasped(env, sphere, site, touch).float(),
    }
