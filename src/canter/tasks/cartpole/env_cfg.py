"""Cartpole balance: keep the pole upright by pushing the cart, within the rail."""

from __future__ import annotations

import math

from canter import mdp
from canter.envs.env_cfg import EnvCfg
from canter.managers.event import EventTermCfg
from canter.managers.observation import ObsGroupCfg, ObsTermCfg
from canter.managers.reward import RewardTermCfg
from canter.managers.termination import TerminationTermCfg
from canter.mdp.actions import joint_effort_action
from canter.scene.entity import joints
from canter.sim.config import SimCfg
from canter.sim.model import asset_path

EPISODE_LENGTH_S = 5.0
ALIVE_WEIGHT = 1.0


def cartpole_env_cfg() -> EnvCfg:
    """A fresh config: 120 Hz physics, 60 Hz control, 5 s episodes."""
    return EnvCfg(
        model_path=str(asset_path("cartpole.xml")),
        num_envs=1024,
        decimation=2,
        episode_length_s=EPISODE_LENGTH_S,
        sim=SimCfg(),
        actions={"cart_force": joint_effort_action("cart_force", scale=100.0)},
        observations={
            "policy": ObsGroupCfg(
                terms={
                    "joint_pos_rel": ObsTermCfg(func=mdp.joint_pos_rel),
                    "joint_vel": ObsTermCfg(func=mdp.joint_vel),
                }
            )
        },
        events={
            "reset_cart": EventTermCfg(
                func=mdp.reset_joints_by_offset,
                mode="reset",
                params={
                    "joints": joints("slider"),
                    "position_range": (-1.0, 1.0),
                    "velocity_range": (-0.5, 0.5),
                },
            ),
            "reset_pole": EventTermCfg(
                func=mdp.reset_joints_by_offset,
                mode="reset",
                params={
                    "joints": joints("hinge"),
                    "position_range": (-0.25 * math.pi, 0.25 * math.pi),
                    "velocity_range": (-0.25 * math.pi, 0.25 * math.pi),
                },
            ),
        },
        rewards={
            "alive": RewardTermCfg(func=mdp.is_alive, weight=ALIVE_WEIGHT),
            "terminating": RewardTermCfg(func=mdp.is_terminated, weight=-2.0),
            "pole_pos": RewardTermCfg(
                func=mdp.joint_pos_target_l2, weight=-1.0, params={"joints": joints("hinge"), "target": 0.0}
            ),
            "cart_vel": RewardTermCfg(
                func=mdp.joint_vel_l1, weight=-0.01, params={"joints": joints("slider")}
            ),
            "pole_vel": RewardTermCfg(
                func=mdp.joint_vel_l1, weight=-0.005, params={"joints": joints("hinge")}
            ),
        },
        terminations={
            "time_out": TerminationTermCfg(func=mdp.time_out, time_out=True),
            "cart_out_of_bounds": TerminationTermCfg(
                func=mdp.joint_pos_out_of_manual_limit,
                params={"joints": joints("slider"), "bounds": (-3.0, 3.0)},
            ),
        },
    )
