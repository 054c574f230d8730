"""Ant running: a four-legged ant runs forward (+x) as fast as it can without falling."""

from __future__ import annotations

from canter import mdp
from canter.envs.env_cfg import EnvCfg
from canter.managers.event import EventTermCfg
from canter.managers.observation import ObsGroupCfg, ObsTermCfg
from canter.managers.reward import RewardTermCfg
from canter.managers.termination import TerminationTermCfg
from canter.mdp.actions import joint_effort_action
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


def ant_classic_env_cfg() -> EnvCfg:
    """The ant with the classic Gymnasium Ant-v5 reward per control step (no contact cost):
    r = 1 (healthy) + x-velocity - 0.5 |a|^2, episodes of 1000 steps (50 s) ended early when the
    torso leaves 0.2 <= z <= 1.0. Canter sums weight * term * dt, so each weight is the Ant-v5
    coefficient divided by dt; returns are then directly comparable with Ant-v5's (minus its
    contact cost, which the side-by-side benchmark removes from Gymnasium's side too)."""
    cfg = ant_env_cfg()
    cfg.num_envs = 256
    cfg.episode_length_s = 50.0
    per_step = 1.0 / (cfg.decimation * 0.01)  # Canter multiplies by dt = decimation * timestep
    cfg.observations["policy"] = ObsGroupCfg(
        terms={
            "root_height": ObsTermCfg(func=mdp.root_height),
            "root_quat": ObsTermCfg(func=mdp.root_quat_w),
            "joint_pos": ObsTermCfg(func=mdp.joint_pos),
            "root_lin_vel_w": ObsTermCfg(func=mdp.root_lin_vel_w),
            "root_ang_vel": ObsTermCfg(func=mdp.base_ang_vel),
            "joint_vel": ObsTermCfg(func=mdp.joint_vel),
        }
    )
    cfg.events["reset_base"].params = {"position_range": (0.0, 0.0), "velocity_range": (-0.1, 0.1)}
    cfg.events["reset_joints"].params = {"position_range": (-0.1, 0.1), "velocity_range": (-0.1, 0.1)}
    cfg.rewards = {
        "healthy": RewardTermCfg(func=mdp.is_alive, weight=1.0 * per_step),
        "forward": RewardTermCfg(func=ant_mdp.ForwardVelocity, weight=1.0 * per_step),
        "ctrl_cost": RewardTermCfg(func=mdp.action_l2, weight=-0.5 * per_step),
    }
    cfg.terminations = {
        "time_out": TerminationTermCfg(func=mdp.time_out, time_out=True),
        "unhealthy": TerminationTermCfg(func=mdp.root_height_out_of_range, params={"low": 0.2, "high": 1.0}),
    }
    return cfg
