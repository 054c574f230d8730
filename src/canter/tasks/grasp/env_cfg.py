"""Grasping a small sphere with a 6-DoF arm (seed 002's task), from full state: the arm in
canter/assets/arm_grasp.xml picks a 2 cm-radius sphere off a table among three distractors.

200 Hz physics, 20 Hz control (decimation 10): Cartesian tcp deltas, gripper yaw and open/close
through a batched differential IK (canter.tasks.grasp.action). Success: the sphere lifted >= 10 cm
above the table and held there for 1 s; the episode then ends (terminated, with a bonus).
"""

from __future__ import annotations

from canter import mdp
from canter.envs.env_cfg import EnvCfg
from canter.managers.event import EventTermCfg
from canter.managers.observation import ObsGroupCfg, ObsTermCfg
from canter.managers.reward import RewardTermCfg
from canter.managers.termination import TerminationTermCfg
from canter.sim.config import SimCfg
from canter.sim.model import asset_path
from canter.tasks.grasp import mdp as grasp
from canter.tasks.grasp.action import EndEffectorDeltaActionCfg

EPISODE_LENGTH_S = 8.0
SUCCESS_HEIGHT = 0.10  # m above the table
SUCCESS_HOLD_S = 1.0


def proprio_terms() -> dict[str, ObsTermCfg]:
    """What the robot knows of itself: arm joints, gripper opening, tcp pose, finger contacts, last action."""
    return {
        "joint_pos": ObsTermCfg(func=mdp.joint_pos_rel, params={"joints": grasp.ARM_JOINTS}),
        "joint_vel": ObsTermCfg(func=mdp.joint_vel, params={"joints": grasp.ARM_JOINTS}, scale=0.1),
        "gripper_opening": ObsTermCfg(func=grasp.gripper_opening, params={"fingers": grasp.FINGER_JOINTS}, scale=10.0),
        "tcp_pos": ObsTermCfg(func=grasp.tcp_pos_b, params={"site": grasp.TCP}),
        "tcp_heading": ObsTermCfg(func=grasp.tcp_heading, params={"site": grasp.TCP}),
        "finger_contact": ObsTermCfg(func=grasp.finger_contact, params={"sensors": grasp.FINGER_TOUCH}),
        "actions": ObsTermCfg(func=mdp.last_action),
    }


def privileged_terms() -> dict[str, ObsTermCfg]:
    """What only the simulator knows: the sphere and the distractors relative to the tcp (world frame)."""
    return {
        "sphere_rel_tcp": ObsTermCfg(func=grasp.bodies_rel_tcp, params={"bodies": grasp.SPHERE, "site": grasp.TCP}),
        "distractors_rel_tcp": ObsTermCfg(
            func=grasp.bodies_rel_tcp, params={"bodies": grasp.DISTRACTORS, "site": grasp.TCP}
        ),
    }


def arm_grasp_state_env_cfg() -> EnvCfg:
    """A fresh config of `arm-grasp-state`: the policy sees proprioception and the objects' positions."""
    sphere_tcp_touch = {"sphere": grasp.SPHERE, "site": grasp.TCP, "sensors": grasp.FINGER_TOUCH}
    return EnvCfg(
        model_path=str(asset_path("arm_grasp.xml")),
        default_keyframe="home",
        num_envs=256,
        decimation=10,
        episode_length_s=EPISODE_LENGTH_S,
        sim=SimCfg(sensor_stage="current"),
        actions={"ee_delta": EndEffectorDeltaActionCfg()},
        observations={"policy": ObsGroupCfg(terms={**proprio_terms(), **privileged_terms()})},
        events={
            "reset_arm": EventTermCfg(
                func=mdp.reset_joints_by_offset,
                mode="reset",
                params={"position_range": (-0.05, 0.05), "joints": grasp.ARM_JOINTS},
            ),
            "reset_objects": EventTermCfg(
                func=grasp.ResetObjects, mode="reset", params={"objects": grasp.OBJECTS, "jitter": 0.015}
            ),
        },
        rewards={
            "reach": RewardTermCfg(func=grasp.reach, weight=1.0, params={"sphere": grasp.SPHERE, "site": grasp.TCP}),
            "grasp": RewardTermCfg(func=grasp.grasp, weight=2.0, params=dict(sphere_tcp_touch)),
            "lift": RewardTermCfg(func=grasp.lift, weight=5.0, params={**sphere_tcp_touch, "height": SUCCESS_HEIGHT}),
            "success": RewardTermCfg(func=grasp.SuccessBonus, weight=200.0, params={"term": "success"}),
            "action_rate": RewardTermCfg(func=mdp.action_rate_l2, weight=-0.01),
        },
        terminations={
            "time_out": TerminationTermCfg(func=mdp.time_out, time_out=True),
            "success": TerminationTermCfg(
                func=grasp.SphereLiftedAndHeld,
                params={"sphere": grasp.SPHERE, "height": SUCCESS_HEIGHT, "hold_s": SUCCESS_HOLD_S},
            ),
            "sphere_off_table": TerminationTermCfg(func=grasp.sphere_off_table, params={"sphere": grasp.SPHERE}),
        },
    )
