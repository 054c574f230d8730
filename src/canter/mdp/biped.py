"""Terms for legged robots on two feet (the humanoid): single-stance air time, foot slip, posture
(deviation from the default joint positions), a walking clock and a fall test measured from the
ground under the robot. Swing-foot clearance is shared with four-legged robots and lives in
`canter.mdp.locomotion` (`biped.feet_clearance` names the same function, for saved configs).

Feet are read through MJCF sensors: `touch` on a box site around each sole (normal force, N),
`framepos` and `framelinvel` on a site at each sole (world frame, m and m/s). Selections list the
feet in the same order for every sensor kind.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from canter.core import selection
from canter.managers.term import ManagerTerm, TermCfg
from canter.mdp.locomotion import _command_speed, _readings, _sole_heights, _vectors
from canter.mdp.locomotion import feet_clearance as feet_clearance
from canter.mdp.observations import _cols
from canter.mdp.terrain import _ground_height
from canter.scene.entity import Resolved

if TYPE_CHECKING:
    from canter.envs.manager_env import ManagerBasedRLEnv


class FeetAirTimeBiped(ManagerTerm):
    """Rewards walking on one foot at a time: while exactly one foot touches the ground, the time
    (s) the feet have spent in their current mode (the stance foot's contact time, the swing foot's
    air time), the smaller of the two, capped at `threshold`; 0 in double stance or flight, and 0
    while the commanded planar speed is below 0.1 m/s (standing still is not penalized).
    Params: sensors (the two feet's touch sensors), command_name, threshold (s), contact_force (N).
    """

    def __init__(self, cfg: TermCfg, env: ManagerBasedRLEnv):
        super().__init__(cfg, env)
        feet = cfg.params["sensors"].resolve(env.scene)
        self.air_time = torch.zeros(env.num_envs, feet.count, device=env.device)
        self.contact_time = torch.zeros_like(self.air_time)

    def __call__(
        self, env: ManagerBasedRLEnv, sensors: Resolved, command_name: str, threshold: float = 0.4, contact_force: float = 1.0
    ) -> torch.Tensor:
        contact = _readings(env, sensors) > contact_force
        # a mode's clock runs while the foot stays in it and restarts at the switch
        self.contact_time.add_(env.step_dt).mul_(contact)
        self.air_time.add_(env.step_dt).mul_(~contact)
        in_mode = torch.where(contact, self.contact_time, self.air_time)
        single_stance = torch.sum(contact, dim=1) == 1
        reward = torch.min(in_mode, dim=1).values.clamp_max_(threshold).mul_(single_stance)
        return reward.mul_(_command_speed(env, command_name) > 0.1)

    def reset(self, env_ids: torch.Tensor) -> None:
        selection.fill(self.air_time, env_ids, 0.0)
        selection.fill(self.contact_time, env_ids, 0.0)

    def state_dict(self) -> dict[str, torch.Tensor]:
        return {"air_time": self.air_time.clone(), "contact_time": self.contact_time.clone()}


def feet_slide(env: ManagerBasedRLEnv, touch: Resolved, velocity: Resolved, contact_force: float = 1.0) -> torch.Tensor:
    """sum over feet in contact of their planar speed, m/s: a foot on the ground should not slip."""
    contact = _readings(env, touch) > contact_force
    speed = torch.linalg.vector_norm(_vectors(env, velocity)[..., :2], dim=2)
    return torch.sum(speed * contact, dim=1)


def joint_deviation_l1(env: ManagerBasedRLEnv, joints: Resolved) -> torch.Tensor:
    """sum_j |q_j - q_default_j| over the selected joints, rad: keeps a posture (arms, waist, hip
    roll and yaw) near the default pose."""
    q = _cols(env.scene.joint_pos, joints, env)
    return torch.sum(torch.abs(q - env.scene.default_joint_pos[joints.columns]), dim=1)


def root_height_above_ground_below(env: ManagerBasedRLEnv, minimum_height: float) -> torch.Tensor:
    """Termination: the root is less than `minimum_height` m above the ground below it (terrain
    height when there is a terrain, 0 on the plane): a fall, on stairs as on flat ground."""
    root = env.scene.root_pos_w
    ground = _ground_height(env, root[:, :2].to(torch.float32)).to(root.dtype)
    return root[:, 2] - ground < minimum_height


def feet_height(env: ManagerBasedRLEnv, position: Resolved) -> torch.Tensor:
    """(num_envs, k) each sole's height above the ground below it, m (a privileged observation)."""
    return _sole_heights(env, position)



def gait_phase(env: ManagerBasedRLEnv, period: float) -> torch.Tensor:
    """(num_envs, 2) the phase in [0, 1) of each leg (left, right) of a walking clock of `period`
    seconds that starts with the episode; the right leg runs half a period behind the left."""
    def compute() -> torch.Tensor:
        t = env.episode_length_buf.to(torch.float32) * env.step_dt
        left = torch.remainder(t / period, 1.0)
        return torch.stack((left, torch.remainder(left + 0.5, 1.0)), dim=1)

    return env.scene.cached_while(f"gait_phase/{period}", env.episode_length_buf, compute)


def gait_clock(env: ManagerBasedRLEnv, period: float) -> torch.Tensor:
    """(num_envs, 2) sin and cos of the left leg's phase (the right leg's are their negatives, so
    the left-right mirror of this observation is its negation)."""
    def compute() -> torch.Tensor:
        angle = 2.0 * torch.pi * gait_phase(env, period)[:, 0]
        return torch.stack((torch.sin(angle), torch.cos(angle)), dim=1)

    return env.scene.cached_while(f"gait_clock/{period}", env.episode_length_buf, compute)


def feet_contact_phase(
    env: ManagerBasedRLEnv, sensors: Resolved, period: float, command_name: str, stance_fraction: float = 0.55,
    contact_force: float = 1.0,
) -> torch.Tensor:
    """A gait prior that makes a biped step from the first minutes. While the commanded planar speed
    is above 0.1 m/s: the sum over the feet of +1 for a contact that matches the walking clock (on
    the ground during the first `stance_fraction` of the leg's phase, in the air after it) and -1 for
    one that does not, in [-2, 2]; standing on both feet through a walking command earns
    2 * (2 * stance_fraction - 1), nearly nothing, instead of the 2 * stance_fraction a count of the
    matches would pay. Below 0.1 m/s: the number of feet on the ground (0..2), so standing still
    when asked to is paid in full."""
    contact = _readings(env, sensors) > contact_force
    stance = gait_phase(env, period) < stance_fraction
    walking = torch.sum(torch.where(contact == stance, 1.0, -1.0), dim=1)
    standing = torch.sum(contact.float(), dim=1)
    return torch.where(_command_speed(env, command_name) > 0.1, walking, standing)


def feet_swing_height(
    env: ManagerBasedRLEnv, position: Resolved, period: float, target_height: float, command_name: str,
    stance_fraction: float = 0.55,
) -> torch.Tensor:
    """sum over the feet that the walking clock has in swing (phase >= stance_fraction) of
    (target_height - h)_+^2, h the sole's height above the ground below it (m): a foot the clock
    lifts must leave the ground, which feet_clearance (moving feet only) does not ask of a robot that
    stands still; 0 while the commanded planar speed is below 0.1 m/s."""
    height = _sole_heights(env, position)
    shortfall = (target_height - height).clamp_min(0.0)
    swing = gait_phase(env, period) >= stance_fraction
    penalty = torch.sum(shortfall.square() * swing.to(height.dtype), dim=1)
    return penalty * (_command_speed(env, command_name) > 0.1)
