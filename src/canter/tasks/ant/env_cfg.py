"""Ant running: a four-legged ant runs forward (+x) as fast as it can without falling."""

from __future__ import annotations

from canter import mdp
from canter.envs.env_cfg import EnvCfg
from canter.managers.action import joint_effort_action
from canter.managers.event import EventTermCfg
from canter.managers.observation import ObsGroupCfg, ObsTermCfg
from canter.managers.reward import RewardTermCfg
from canter.managers.termination import TerminationTermCfg
from canter.scene.entity import sensors
from canter.sim.config import SimCfg
from canter.sim.model import asset_path
from canter.tasks.ant import mdp as ant_mdp


def ant_env_cfg() -> EnvCfg:
    """A fresh config: 100 Hz physics, 20 Hz control (5 substeps), 15 s episodes."""
    return EnvCfg(
        model_path=str(asset_path("ant.xml")),
        spec_edits=(ant_mdp.add_foot_touch_sensors,),
        num_envs=1024,
        decimation=5,
        episode_length_s=15.0,
        sim=SimCfg(),
        actions={"joint_effort": joint_effort_action(scale=1.0)},
        observations={
            "policy": ObsGroupCfg(
                terms={
                    "base_height": ObsTermCfg(func=mdp.root_height),
                    "base_lin_vel": ObsTermCfg(func=mdp.base_lin_vel),
                    "base_ang_vel": ObsTermCfg(func=mdp.base_ang_vel, scale=0.25),
                    "base_angle_to_target": ObsTermCfg(func=ant_mdp.angle_to_target),
                    "base_up_proj": ObsTermCfg(func=ant_mdp.up_proj),
                    "base_heading_proj": ObsTermCfg(func=ant_mdp.heading_proj),
                    "projected_gravity": ObsTermCfg(func=mdp.projected_gravity),
                    "joint_pos_norm": ObsTermCfg(func=mdp.joint_pos_limit_normalized),
                    "joint_vel": ObsTermCfg(func=mdp.joint_vel, scale=0.2),
                    "feet_contact": ObsTermCfg(
                        func=mdp.sensor, params={"sensors": sensors(".*_touch")}, scale=0.1, clip=(0.0, 10.0)
                    ),
                    "actions": ObsTermCfg(func=mdp.last_action),
                }
            )
        },
        events={
            "reset_base": EventTermCfg(
                func=mdp.reset_root_state_uniform,
                mode="reset",
                params={"yaw_range": (-0.3, 0.3), "velocity_range": (-0.1, 0.1)},
            ),
            "reset_joints": EventTermCfg(
                func=mdp.reset_joints_by_offset,
                mode="reset",
                params={"position_range": (-0.2, 0.2), "velocity_range": (-0.1, 0.1)},
            ),
        },
        rewards={
            "progress": RewardTermCfg(func=ant_mdp.Progress, weight=1.0),
            "alive": RewardTermCfg(func=mdp.is_alive, weight=0.5),
            "upright": RewardTermCfg(func=ant_mdp.upright, weight=0.1),
            "move_to_target": RewardTermCfg(func=ant_mdp.move_to_target, weight=0.5),
            "action_l2": RewardTermCfg(func=mdp.action_l2, weight=-0.005),
            "energy": RewardTermCfg(func=mdp.joint_power_l1, weight=-0.05),
            "joint_pos_limits": RewardTermCfg(func=mdp.joint_pos_limits, weight=-0.1),
        },
        terminations={
            "time_out": TerminationTermCfg(func=mdp.time_out, time_out=True),
            "torso_height": TerminationTermCfg(
                func=mdp.root_height_below_minimum, params={"minimum_height": 0.26}
            ),
        },
    )
