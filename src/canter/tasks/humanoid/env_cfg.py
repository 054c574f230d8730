"""Velocity tracking for the Canter humanoid (21-DoF biped, G1 class): follow commanded forward,
lateral and yaw-rate velocities on flat ground (`humanoid-flat`) and over stairs up and down with a
terrain curriculum and a height scan (`humanoid-stairs`). 200 Hz physics, 50 Hz control, joint
position targets around the home pose.

The reward set and why (weights per second; the manager multiplies by dt):
- track_lin_vel_xy / track_ang_vel_z, exp(-err^2 / 0.25), 1.0 each: the task.
- termination, -200: falling must cost more than any episode of shaping can pay back, or an early
  policy learns that ending the episode is cheaper than its penalties.
- feet_air_time (single stance, capped at 0.4 s), 0.5: rewards alternating steps of a useful length;
  shuffling in double stance earns nothing.
- contact_phase, 0.3 per foot: a walking clock (0.8 s period, stance for 55 % of it, the legs half a
  period apart; sin/cos of the phase are observed), after Unitree's G1 recipe. On a walking command
  (planar speed > 0.1 m/s) a foot earns +1 when its contact matches the clock and -1 when it does
  not; on a standing command, +1 per foot on the ground. Without the clock (air time alone) the
  policy learnt to stand and turn but not to walk (forward error 0.42 -> 0.40 m/s from 10 to 40
  minutes); with a clock that paid matches only (0..2 feet) it stood on both feet, which collects
  55 % of the pay (0.42 m/s after 20 min). Signed, standing through a walking command earns 0.1 of 2.
- swing_height, -20: (0.08 m - h)_+^2 for a foot the clock has in swing, on walking commands: the
  clock's swing must lift the foot (feet_clearance asks it only of feet that already move). With
  the signed phase: forward error 0.24 m/s after 20 minutes, the first policy that walks
  (BENCHMARKS.md section 17).
- feet_slide, -0.25, and feet_clearance (swing foot below 8 cm), -20: a stance foot that slips
  and a swing foot that scuffs both break on stairs and on a real robot.
- posture: |q - q_home| of hip roll and yaw (-0.2), waist (-0.2) and arms (-0.1): without it the
  policy uses hips and arms for balance tricks that do not transfer; the legs' pitch joints stay free.
- flat_orientation, -1.0, ang_vel_xy, -0.05, base_height (flat only), -10: the torso stays upright
  at walking height instead of crouching.
- energy |tau * qd|, -5e-4, joint_acc, -2.5e-7, action_rate, -0.01, ankle joint limits, -1.0:
  smooth, economical motion the motors can deliver.
"""

from __future__ import annotations

import math

from canter import mdp
from canter.envs.env_cfg import EnvCfg
from canter.managers.curriculum import CurriculumTermCfg
from canter.managers.event import EventTermCfg
from canter.managers.observation import ObsGroupCfg, ObsTermCfg
from canter.managers.reward import RewardTermCfg
from canter.managers.symmetry import SymmetryCfg, mirror_of, mirror_signs
from canter.managers.termination import TerminationTermCfg
from canter.mdp import biped, locomotion
from canter.mdp.actions import joint_position_action
from canter.scene.entity import bodies, geoms, joints, sensors
from canter.sim.config import SimCfg
from canter.sim.model import asset_path
from canter.tasks.legged import (
    add_domain_randomization,
    add_height_scan,
    add_runaway_guards,
    heading_velocity_command,
    velocity_policy_obs,
)
from canter.terrains import TerrainCfg, sub_terrain_mix

FEET_TOUCH = sensors("left_foot_touch", "right_foot_touch")
FEET_POS = sensors("left_foot_pos", "right_foot_pos")
FEET_VEL = sensors("left_foot_linvel", "right_foot_linvel")
FEET_GEOMS = geoms("left_foot_geom", "right_foot_geom")
BODY_CONTACTS = sensors("pelvis_contact", "torso_contact")
THIGH_CONTACTS = sensors(".*_thigh_contact")
HOME_PELVIS_HEIGHT = 0.753
# standing height of the pelvis over the soles (knees bent 0.4 rad), the base_height target
WALKING_PELVIS_HEIGHT = 0.74


def _critic_obs() -> ObsGroupCfg:
    """Privileged, noiseless: the policy's observations plus foot contacts and heights, friction
    and pelvis mass."""
    group = velocity_policy_obs()
    group.enable_corruption = False
    group.terms["feet_contact"] = ObsTermCfg(func=locomotion.contact_states, params={"sensors": FEET_TOUCH}, mirror=mirror_of("swap"))
    group.terms["feet_height"] = ObsTermCfg(func=biped.feet_height, params={"position": FEET_POS}, mirror=mirror_of("swap"))
    group.terms["foot_friction"] = ObsTermCfg(func=locomotion.geom_friction, params={"geoms": FEET_GEOMS}, mirror=mirror_of("swap"))
    group.terms["pelvis_mass"] = ObsTermCfg(
        func=locomotion.body_mass, params={"bodies": bodies("pelvis")}, mirror=mirror_of("invariant")
    )
    return group


def _rewards() -> dict[str, RewardTermCfg]:
    command = {"command_name": "base_velocity"}
    return {
        "track_lin_vel_xy": RewardTermCfg(func=mdp.track_lin_vel_xy_exp, weight=1.0, params={**command, "std": 0.5}),
        "track_ang_vel_z": RewardTermCfg(func=mdp.track_ang_vel_z_exp, weight=1.0, params={**command, "std": 0.5}),
        "termination": RewardTermCfg(func=mdp.is_terminated, weight=-200.0),
        "feet_air_time": RewardTermCfg(
            func=biped.FeetAirTimeBiped, weight=0.5, params={"sensors": FEET_TOUCH, **command, "threshold": 0.4}
        ),
        "feet_slide": RewardTermCfg(func=biped.feet_slide, weight=-0.25, params={"touch": FEET_TOUCH, "velocity": FEET_VEL}),
        "feet_clearance": RewardTermCfg(
            func=biped.feet_clearance,
            weight=-20.0,
            params={"position": FEET_POS, "velocity": FEET_VEL, "target_height": 0.08, **command},
        ),
        "hip_deviation": RewardTermCfg(
            func=biped.joint_deviation_l1, weight=-0.2, params={"joints": joints(".*_hip_roll_joint", ".*_hip_yaw_joint")}
        ),
        "waist_deviation": RewardTermCfg(func=biped.joint_deviation_l1, weight=-0.2, params={"joints": joints("waist_yaw_joint")}),
        "arm_deviation": RewardTermCfg(
            func=biped.joint_deviation_l1, weight=-0.1, params={"joints": joints(".*_shoulder_.*", ".*_elbow_joint")}
        ),
        "flat_orientation": RewardTermCfg(func=mdp.flat_orientation_l2, weight=-1.0),
        "ang_vel_xy": RewardTermCfg(func=mdp.ang_vel_xy_l2, weight=-0.05),
        "base_height": RewardTermCfg(func=locomotion.base_height_l2, weight=-10.0, params={"target_height": WALKING_PELVIS_HEIGHT}),
        "energy": RewardTermCfg(func=mdp.joint_power_l1, weight=-5e-4),
        "joint_acc": RewardTermCfg(func=locomotion.JointAccL2, weight=-2.5e-7),
        "action_rate": RewardTermCfg(func=mdp.action_rate_l2, weight=-0.01),
        "ankle_limits": RewardTermCfg(func=mdp.joint_pos_limits, weight=-1.0, params={"soft_ratio": 0.95}),
        "thigh_contacts": RewardTermCfg(func=locomotion.undesired_contacts, weight=-1.0, params={"sensors": THIGH_CONTACTS}),
    }


GAIT_PERIOD_S = 0.8


def add_gait_clock(cfg: EnvCfg, period: float = GAIT_PERIOD_S, weight: float = 0.3, swing_weight: float = -20.0) -> None:
    """A walking clock (Unitree's G1 recipe): sin/cos of the left leg's phase in both observation
    groups; +1 for each foot whose contact matches it and -1 for each that does not (stance for the
    first 55 % of the leg's phase, the right leg half a period behind); a penalty on a foot the
    clock has in swing that is below 8 cm. Both apply to walking commands only."""
    clock = {"period": period}
    command = {"command_name": "base_velocity"}
    for group in ("policy", "critic"):
        cfg.observations[group].terms["gait_clock"] = ObsTermCfg(func=biped.gait_clock, params=dict(clock), mirror=mirror_signs(-1.0, -1.0))
    cfg.rewards["contact_phase"] = RewardTermCfg(
        func=biped.feet_contact_phase, weight=weight, params={"sensors": FEET_TOUCH, "period": period, **command}
    )
    cfg.rewards["swing_height"] = RewardTermCfg(
        func=biped.feet_swing_height, weight=swing_weight,
        params={"position": FEET_POS, "period": period, "target_height": 0.08, **command},
    )


def humanoid_flat_env_cfg() -> EnvCfg:
    cfg = EnvCfg(
        model_path=str(asset_path("humanoid.xml")),
        default_keyframe="home",
        num_envs=1024,
        decimation=4,
        episode_length_s=20.0,
        sim=SimCfg(),
        actions={"joint_pos": joint_position_action(scale=0.25)},
        commands={"base_velocity": heading_velocity_command(lin_vel_x=(-0.5, 1.0), lin_vel_y=(-0.5, 0.5))},
        observations={"policy": velocity_policy_obs(), "critic": _critic_obs()},
        events={
            "reset_base": EventTermCfg(
                func=mdp.reset_root_state_uniform,
                mode="reset",
                params={"position_range": (-0.5, 0.5), "yaw_range": (-math.pi, math.pi), "velocity_range": (-0.2, 0.2)},
            ),
            "reset_joints": EventTermCfg(
                func=mdp.reset_joints_by_offset, mode="reset", params={"position_range": (-0.05, 0.05), "velocity_range": (0.0, 0.0)}
            ),
            "push": EventTermCfg(
                func=mdp.push_by_setting_velocity, mode="interval", interval_range_s=(10.0, 15.0), params={"velocity_range": (-0.5, 0.5)}
            ),
        },
        rewards=_rewards(),
        symmetry=HUMANOID_SYMMETRY,
        terminations={
            "time_out": TerminationTermCfg(func=mdp.time_out, time_out=True),
            "body_contact": TerminationTermCfg(func=locomotion.illegal_contact, params={"sensors": BODY_CONTACTS}),
            "fell": TerminationTermCfg(func=biped.root_height_above_ground_below, params={"minimum_height": 0.45}),
            "bad_orientation": TerminationTermCfg(func=mdp.bad_orientation, params={"limit_angle": 1.0}),
        },
    )
    add_gait_clock(cfg)
    add_domain_randomization(cfg, foot_geoms=FEET_GEOMS, base_body="pelvis", mass_range=(-1.0, 3.0), max_delay_steps=1)
    add_runaway_guards(cfg)
    return cfg


# left and right limbs trade places; roll and yaw joints (about x and z) flip sign, pitch joints do not
HUMANOID_SYMMETRY = SymmetryCfg(pairs=(("left_", "right_"),), negated=(".*_roll_joint", ".*_yaw_joint"))


def stairs_terrain_cfg() -> TerrainCfg:
    """Stairs up (pyramids) and down (pits), 5 to 18 cm steps of 30 cm, with some flat and rough
    blocks to learn walking on first: 10 difficulty rows."""
    return TerrainCfg(sub_terrains=sub_terrain_mix(flat=0.1, rough=0.1, stairs_up=0.4, stairs_down=0.4), num_cols=10)


def humanoid_stairs_env_cfg() -> EnvCfg:
    """humanoid-flat over the stairs terrain: spawns at terrain origins, a height scan in the
    observations, the game-style terrain curriculum (promoted after walking out of its block,
    demoted after covering less than half its command)."""
    cfg = humanoid_flat_env_cfg()
    cfg.terrain = stairs_terrain_cfg()
    cfg.events["reset_base"] = EventTermCfg(
        func=mdp.reset_root_state_from_terrain,
        mode="reset",
        params={"position_range": (-0.5, 0.5), "yaw_range": (-math.pi, math.pi), "velocity_range": (-0.2, 0.2), "height_offset": 0.03},
    )
    add_height_scan(cfg, noise=0.05)
    cfg.rewards["base_height"].weight = 0.0
    cfg.rewards["flat_orientation"].weight = -0.5
    command = cfg.commands["base_velocity"]
    command.lin_vel_x = (0.0, 1.0)  # type: ignore[attr-defined]
    cfg.curriculum = {
        "terrain_levels": CurriculumTermCfg(func=mdp.terrain_levels, params={"command_name": "base_velocity"}),
        "terrain_top_third": CurriculumTermCfg(func=mdp.terrain_top_share, params={"fraction": 1.0 / 3.0}),
    }
    return cfg
