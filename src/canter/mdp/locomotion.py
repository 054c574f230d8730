"""Terms of legged locomotion: contact-based rewards and terminations, swing-foot clearance, torques,
accelerations.

Contacts come from MJCF sensors: `touch` sensors on foot sites (normal force, N) and `contact`
sensors with data="found" on bodies that must not touch the ground (thighs, trunk); feet positions
and velocities from `framepos` and `framelinvel` sensors on a site at each foot (world frame, m and
m/s), listed in the same order as the feet's other sensors.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch

from canter.core import selection
from canter.core.errors import ConfigError
from canter.managers.term import ManagerTerm, TermCfg
from canter.mdp.terrain import _ground_height
from canter.scene.entity import Resolved

if TYPE_CHECKING:
    from canter.envs.manager_env import ManagerBasedRLEnv


def _readings(env: ManagerBasedRLEnv, sensors: Resolved) -> torch.Tensor:
    if sensors.data_slice is not None:
        return env.sim.sensordata[:, sensors.data_slice]
    return env.sim.sensordata.index_select(1, sensors.data_adr)


def contact_states(env: ManagerBasedRLEnv, sensors: Resolved, threshold: float = 1.0) -> torch.Tensor:
    """(num_envs, k) 1.0 where a touch sensor reads more than `threshold` newtons."""
    return (_readings(env, sensors) > threshold).float()


def _vectors(env: ManagerBasedRLEnv, sensors: Resolved) -> torch.Tensor:
    """(num_envs, k, 3) readings of k three-dimensional sensors."""
    return _readings(env, sensors).reshape(env.num_envs, -1, 3)


def _command_speed(env: ManagerBasedRLEnv, command_name: str) -> torch.Tensor:
    """(num_envs,) the commanded planar speed, m/s (computed once for the terms that ask)."""
    command = env.command_manager.get_command(command_name)
    return env.scene.cached_while(
        f"command_speed/{command_name}", command, lambda: torch.linalg.vector_norm(command[:, :2], dim=1))


def _sole_heights(env: ManagerBasedRLEnv, position: Resolved) -> torch.Tensor:
    """(num_envs, k) each foot site's height above the ground below it, m (the humanoid's sites are at
    its soles, the dog's at the centres of its foot spheres; computed once per state)."""

    def compute() -> torch.Tensor:
        pos = _vectors(env, position)
        ground = _ground_height(env, pos[..., :2].to(torch.float32)).to(pos.dtype)
        return pos[..., 2] - ground

    return env.scene.cached(f"sole_heights/{','.join(position.names)}", compute)


def feet_clearance(
    env: ManagerBasedRLEnv, position: Resolved, velocity: Resolved, target_height: float, command_name: str
) -> torch.Tensor:
    """sum over feet of (target_height - h)_+^2 * tanh(2 |v_xy|), h the foot site's height above the
    ground below it (m): a foot moving over the ground (a swing foot) should be lifted to
    target_height; 0 while the commanded planar speed is below 0.1 m/s."""
    shortfall = (target_height - _sole_heights(env, position)).clamp_min(0.0)
    moving = torch.tanh(2.0 * torch.linalg.vector_norm(_vectors(env, velocity)[..., :2], dim=2))
    penalty = torch.sum(shortfall.square() * moving, dim=1)
    return penalty * (_command_speed(env, command_name) > 0.1)


def undesired_contacts(env: ManagerBasedRLEnv, sensors: Resolved) -> torch.Tensor:
    """Number of 'found' contact sensors that detect a contact (e.g. thighs on the ground)."""
    return torch.sum(_readings(env, sensors) > 0.0, dim=1).float()


def illegal_contact(env: ManagerBasedRLEnv, sensors: Resolved) -> torch.Tensor:
    """Termination: any of the given contact sensors (e.g. the trunk's) detects a contact."""
    return torch.any(_readings(env, sensors) > 0.0, dim=1)


class JointTorquesL2(ManagerTerm):
    """sum_j tau_j^2 of the actuator forces of the last physics substep, (N m)^2."""

    def __init__(self, cfg: TermCfg, env: ManagerBasedRLEnv):
        super().__init__(cfg, env)
        self.force = env.sim.field("actuator_force")

    def __call__(self, env: ManagerBasedRLEnv, **params: Any) -> torch.Tensor:
        return torch.sum(self.force**2, dim=1)


class JointAccL2(ManagerTerm):
    """sum_j qdd_j^2 with qdd the change of joint velocity over the control step / step_dt."""

    def __init__(self, cfg: TermCfg, env: ManagerBasedRLEnv):
        super().__init__(cfg, env)
        self.prev_vel = env.scene.joint_vel.float().clone()

    def __call__(self, env: ManagerBasedRLEnv, **params: Any) -> torch.Tensor:
        vel = env.scene.joint_vel.float()
        acc = torch.sub(vel, self.prev_vel).div_(env.step_dt)
        self.prev_vel.copy_(vel)
        return torch.sum(acc.pow_(2), dim=1)

    def reset(self, env_ids: torch.Tensor) -> None:
        selection.put(self.prev_vel, env_ids, selection.take(self.env.scene.joint_vel, env_ids))

    def state_dict(self) -> dict[str, torch.Tensor]:
        return {"prev_vel": self.prev_vel.clone()}


class FeetAirTime(ManagerTerm):
    """Rewards steps: at each touchdown, sum over feet of (air time - threshold) seconds.

    Zero while the commanded planar speed is below 0.1 m/s, so standing still is not penalized.
    Params: sensors (the feet's touch sensors), command_name, threshold (s), contact_force (N).
    """

    def __init__(self, cfg: TermCfg, env: ManagerBasedRLEnv):
        super().__init__(cfg, env)
        feet = cfg.params["sensors"].resolve(env.scene)
        self.air_time = torch.zeros(env.num_envs, feet.count, device=env.device)

    def __call__(self, env: ManagerBasedRLEnv, sensors: Resolved, command_name: str, threshold: float = 0.5, contact_force: float = 1.0) -> torch.Tensor:
        contact = _readings(env, sensors) > contact_force
        self.air_time += env.step_dt
        first_contact = torch.gt(self.air_time, env.step_dt).logical_and_(contact)
        # a bool factor multiplies as 1.0 / 0.0
        reward = torch.sum(torch.sub(self.air_time, threshold).mul_(first_contact), dim=1)
        self.air_time.masked_fill_(contact, 0.0)
        command_xy = env.command_manager.get_command(command_name)[:, :2]
        return reward.mul_(torch.linalg.vector_norm(command_xy, dim=1) > 0.1)

    def reset(self, env_ids: torch.Tensor) -> None:
        selection.fill(self.air_time, env_ids, 0.0)

    def state_dict(self) -> dict[str, torch.Tensor]:
        return {"air_time": self.air_time.clone()}


def base_height_l2(env: ManagerBasedRLEnv, target_height: float) -> torch.Tensor:
    """(z_base - ground height below it - target)^2; the ground is the terrain when there is one."""
    z = env.scene.root_pos_w[:, 2]
    terrain = getattr(env, "terrain", None)
    if terrain is not None:
        z = z - terrain.height_at(env.scene.root_pos_w[:, :2].to(torch.float32)).to(z.dtype)
    return (z - target_height) ** 2


def body_mass(env: ManagerBasedRLEnv, bodies: Resolved) -> torch.Tensor:
    """(num_envs, k) masses of the given bodies in kg, per env when randomized (privileged)."""
    if env.sim.is_expanded("body_mass"):
        return env.sim.expand("body_mass")[:, bodies.ids]
    return env.scene.model_field("body_mass")[bodies.ids].expand(env.num_envs, -1)


def geom_friction(env: ManagerBasedRLEnv, geoms: Resolved) -> torch.Tensor:
    """(num_envs, k) sliding friction of the given geoms, per env when randomized (privileged)."""
    if env.sim.is_expanded("geom_friction"):
        return env.sim.expand("geom_friction")[:, geoms.ids, 0]
    return env.scene.model_field("geom_friction")[geoms.ids, 0].expand(env.num_envs, -1)


def command_velocity_curriculum(
    env: ManagerBasedRLEnv,
    env_ids: torch.Tensor,
    command_name: str,
    reward_term: str,
    max_lin_vel_x: tuple[float, float],
    step: float = 0.1,
    threshold: float = 0.8,
    min_terrain_level: float = 0.0,
) -> torch.Tensor:
    """Widen the forward-velocity command range by `step` (up to max_lin_vel_x) each time the
    resetting envs tracked well: their mean episode sum of `reward_term` exceeds `threshold` of its
    best possible value (weight * episode length), and, with a terrain, the mean terrain level of
    all envs is at least `min_terrain_level`. That gate keeps the command curriculum behind the
    terrain's: robots that stand on the easiest rows track low commands well enough to widen the
    range long before they can cover the distance a faster command asks for, and the terrain
    curriculum then demotes them (dog-rough's mean level fell from 2.5 to 0.2 in 20 minutes that way).
    The range is the command term's device tensor `lin_vel_x_range` (saved with the env), so this
    runs without a host read. Returns the current upper bound (logged)."""
    term = env.command_manager.term(command_name)
    current = getattr(term, "lin_vel_x_range", None)
    if not isinstance(current, torch.Tensor):
        raise ConfigError(f"curriculum command_velocity_curriculum: command {command_name!r} has no lin_vel_x_range")
    if min_terrain_level > 0 and env.terrain is None:
        raise ConfigError("curriculum command_velocity_curriculum: min_terrain_level needs a terrain")
    index = env.reward_manager.names.index(reward_term)
    weight = env.reward_manager.weights[reward_term]
    best = weight * env.max_episode_length_s
    # NaN (no env selected) compares False: nothing widens
    tracked = selection.mean(env.reward_manager.episode_sums[index], env_ids, dim=0) > threshold * best
    if min_terrain_level > 0:
        assert env.terrain is not None
        tracked = tracked & (env.terrain.terrain_levels.float().mean() >= min_terrain_level)
    widen = tracked.float()
    low = (current[0] - step * widen).clamp_min(max_lin_vel_x[0])
    high = (current[1] + step * widen).clamp_max(max_lin_vel_x[1])
    current.copy_(torch.stack((torch.minimum(low, current[0]), torch.maximum(high, current[1]))))
    return current[1].clone()


def velocity_tracking_errors(env: ManagerBasedRLEnv, command_name: str = "base_velocity") -> dict[str, torch.Tensor]:
    """Per-env absolute tracking errors of this step: forward and lateral speed (m/s, body frame)
    and yaw rate (rad/s) against the command — what `canter eval` reports for velocity tasks."""
    command = env.command_manager.get_command(command_name)
    lin = env.scene.root_lin_vel_b.float()
    yaw_rate = env.scene.root_ang_vel_b[:, 2].float()
    return {
        "lin_vel_x_abs_error": (lin[:, 0] - command[:, 0]).abs(),
        "lin_vel_y_abs_error": (lin[:, 1] - command[:, 1]).abs(),
        "yaw_rate_abs_error": (yaw_rate - command[:, 2]).abs(),
    }
