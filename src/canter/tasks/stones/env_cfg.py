"""dog-stones: the Canter dog crosses rows of stepping stones with random heights, driven by a
hierarchical controller (seed 000): the policy outputs CoM target accelerations, the gait phase
speed and foothold offsets at 50 Hz; the low-level controller (GRF QP for the stance legs, swing
trajectories for the others) turns them into joint torques at 250 Hz; physics runs at 500 Hz.

The policy acts on top of the heuristic controller (Raibert footholds + CoM PD), so a zero action
is the heuristic controller (`canter bench stones` evaluates it so). Terrain: 10 difficulty rows x 10
columns (2 flat, 8 stone rows); episodes start on the flat platform at a sub-terrain's centre and
succeed when the trunk is 2.6 m further along +x, past the stones.
"""

from __future__ import annotations

from canter import mdp
from canter.control.robot import motor_actuators
from canter.envs.env_cfg import EnvCfg
from canter.managers.curriculum import CurriculumTermCfg
from canter.managers.event import EventTermCfg
from canter.managers.observation import ObsGroupCfg, ObsTermCfg, unoise
from canter.managers.reward import RewardTermCfg
from canter.managers.termination import TerminationTermCfg
from canter.mdp import controller_action as ctl
from canter.mdp import locomotion
from canter.mdp.commands import ConstantVelocityCommandCfg
from canter.scene.entity import Sel, sensors
from canter.sim.config import SimCfg
from canter.sim.model import asset_path
from canter.tasks.stones import mdp as stones
from canter.terrains import stone_rows_terrain_cfg

GOAL_DISTANCE = 2.6  # m along +x from the spawn point: the far side of the stones
FEET = Sel(kind="site", names=(".*_foot_site",))
SCAN = {"grid_size": (1.2, 0.3), "resolution": 0.05, "offset": 0.28}


def _policy_obs() -> ObsGroupCfg:
    return ObsGroupCfg(
        terms={
            "base_lin_vel": ObsTermCfg(func=mdp.base_lin_vel, noise=unoise(0.1)),
            "base_ang_vel": ObsTermCfg(func=mdp.base_ang_vel, noise=unoise(0.2), scale=0.25),
            "projected_gravity": ObsTermCfg(func=mdp.projected_gravity, noise=unoise(0.05)),
            "joint_pos": ObsTermCfg(func=mdp.joint_pos_rel, noise=unoise(0.01)),
            "joint_vel": ObsTermCfg(func=mdp.joint_vel, noise=unoise(1.5), scale=0.05),
            "actions": ObsTermCfg(func=mdp.last_action),
            "gait_phase": ObsTermCfg(func=ctl.gait_phase),
            "stance": ObsTermCfg(func=ctl.stance_schedule),
            "feet_pos": ObsTermCfg(func=ctl.feet_pos_heading, noise=unoise(0.01)),
            "height_scan": ObsTermCfg(func=mdp.HeightScan, params=dict(SCAN), noise=unoise(0.02), clip=(-1.0, 1.0)),
            "planned_footholds": ObsTermCfg(func=ctl.nominal_footholds_heading),
            "foothold_scan": ObsTermCfg(func=ctl.foothold_scan, noise=unoise(0.02)),
        }
    )


def _critic_obs() -> ObsGroupCfg:
    group = _policy_obs()
    group.enable_corruption = False
    return group


def dog_stones_env_cfg() -> EnvCfg:
    return EnvCfg(
        model_path=str(asset_path("dog.xml")),
        spec_edits=(motor_actuators,),
        default_keyframe="home",
        num_envs=256,
        decimation=10,
        episode_length_s=10.0,
        sim=SimCfg(timestep=0.002, sensor_stage="current"),
        terrain=stone_rows_terrain_cfg(),
        commands={"base_velocity": ConstantVelocityCommandCfg(velocity=(0.5, 0.0, 0.0))},
        actions={"controller": ctl.QuadrupedControllerActionCfg(physics_steps_per_tick=2, command_name="base_velocity")},
        observations={"policy": _policy_obs(), "critic": _critic_obs()},
        events={
            "reset_base": EventTermCfg(
                func=mdp.reset_root_state_from_terrain,
                mode="reset",
                params={"position_range": (-0.1, 0.1), "yaw_range": (-0.05, 0.05), "velocity_range": (0.0, 0.0)},
            ),
            "reset_joints": EventTermCfg(
                func=mdp.reset_joints_by_offset, mode="reset", params={"position_range": (-0.05, 0.05)}
            ),
        },
        rewards={
            "forward_velocity": RewardTermCfg(func=stones.forward_velocity, weight=2.0, params={"max_velocity": 0.6}),
            "reached": RewardTermCfg(func=stones.reached_goal, weight=250.0, params={"distance": GOAL_DISTANCE}),
            "failed": RewardTermCfg(func=stones.failed, weight=-100.0),
            "lin_vel_z": RewardTermCfg(func=mdp.lin_vel_z_l2, weight=-0.5),
            "ang_vel_xy": RewardTermCfg(func=mdp.ang_vel_xy_l2, weight=-0.02),
            "action_l2": RewardTermCfg(func=mdp.action_l2, weight=-0.05),
            "action_rate": RewardTermCfg(func=mdp.action_rate_l2, weight=-0.05),
        },
        terminations={
            "time_out": TerminationTermCfg(func=mdp.time_out, time_out=True),
            "reached": TerminationTermCfg(func=stones.reached_goal, params={"distance": GOAL_DISTANCE}),
            "foot_in_gap": TerminationTermCfg(func=stones.foot_in_gap, params={"sites": FEET, "depth": 0.15}),
            "base_too_low": TerminationTermCfg(func=stones.base_too_low, params={"height": 0.12}),
            "bad_orientation": TerminationTermCfg(func=mdp.bad_orientation, params={"limit_angle": 1.0}),
            "base_contact": TerminationTermCfg(func=locomotion.illegal_contact, params={"sensors": sensors("trunk_contact")}),
        },
        curriculum={"terrain_levels": CurriculumTermCfg(func=stones.stones_levels, params={"distance": GOAL_DISTANCE})},
    )

