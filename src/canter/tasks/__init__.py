"""Canter's registered tasks."""

from __future__ import annotations

from canter.core.registry import Registry, TaskSpec
from canter.mdp.locomotion import velocity_tracking_errors
from canter.mdp.terrain import terrain_episode_metrics
from canter.tasks.ant.agent_cfg import ant_agent_cfg, ant_classic_agent_cfg
from canter.tasks.ant.env_cfg import ant_classic_env_cfg, ant_env_cfg
from canter.tasks.atari import atari_agent_cfg, breakout_env_cfg, pong_env_cfg
from canter.tasks.cartpole.agent_cfg import cartpole_agent_cfg
from canter.tasks.cartpole.env_cfg import ALIVE_WEIGHT, EPISODE_LENGTH_S, cartpole_env_cfg
from canter.tasks.dog.agent_cfg import dog_flat_agent_cfg, dog_rough_agent_cfg, dog_rough_blind_agent_cfg
from canter.tasks.dog.env_cfg import (
    dog_flat_dr_env_cfg,
    dog_flat_env_cfg,
    dog_rough_blind_env_cfg,
    dog_rough_dr_env_cfg,
    dog_rough_env_cfg,
)
from canter.tasks.grasp.agent_cfg import arm_grasp_state_agent_cfg
from canter.tasks.grasp.env_cfg import arm_grasp_state_env_cfg
from canter.tasks.grasp.expert import GraspExpert
from canter.tasks.grasp.mdp import grasp_metrics
from canter.tasks.grasp.vision import arm_grasp_agent_cfg, arm_grasp_env_cfg, arm_grasp_rgbd_env_cfg
from canter.tasks.hand.agent_cfg import hand_agent_cfg, hand_recurrent_agent_cfg
from canter.tasks.hand.env_cfg import (
    hand_cube_axis_dr_env_cfg,
    hand_cube_axis_env_cfg,
    hand_cube_dr_env_cfg,
    hand_cube_env_cfg,
    hand_cube_tilt_dr_env_cfg,
    hand_cube_tilt_env_cfg,
)
from canter.tasks.hand.mdp import hand_episode_metrics, hand_metrics
from canter.tasks.humanoid.agent_cfg import humanoid_agent_cfg
from canter.tasks.humanoid.env_cfg import humanoid_flat_env_cfg, humanoid_stairs_env_cfg
from canter.tasks.stones.agent_cfg import dog_stones_agent_cfg
from canter.tasks.stones.env_cfg import dog_stones_env_cfg

REGISTRY = Registry(
    [
        TaskSpec(
            name="cartpole",
            description="Balance a pole on a cart (our MJCF); 4 observations, 1 action.",
            env_cfg=cartpole_env_cfg,
            agent_cfg=cartpole_agent_cfg,
            max_return=EPISODE_LENGTH_S * ALIVE_WEIGHT,
        ),
        TaskSpec(
            name="ant",
            description="A four-legged ant runs forward (our MJCF; --model accepts any ant-like MJCF).",
            env_cfg=ant_env_cfg,
            agent_cfg=ant_agent_cfg,
        ),
        TaskSpec(
            name="ant-classic",
            description="The ant with Gymnasium Ant-v5's reward (no contact cost): for side-by-side runs.",
            env_cfg=ant_classic_env_cfg,
            agent_cfg=ant_classic_agent_cfg,
        ),
        TaskSpec(
            name="dog-flat",
            description="A 12-DoF quadruped (our MJCF) tracks commanded planar and yaw velocities on flat ground.",
            env_cfg=dog_flat_env_cfg,
            agent_cfg=dog_flat_agent_cfg,
            metrics=velocity_tracking_errors,
        ),
        TaskSpec(
            name="dog-flat-dr",
            description="dog-flat with domain randomization (friction, mass, CoM, inertia, gains, strength, latency).",
            env_cfg=dog_flat_dr_env_cfg,
            agent_cfg=dog_flat_agent_cfg,
            metrics=velocity_tracking_errors,
        ),
        TaskSpec(
            name="dog-rough",
            description="The dog over generated terrain: curriculum, height scan, friction randomization and pushes.",
            env_cfg=dog_rough_env_cfg,
            agent_cfg=dog_rough_agent_cfg,
            metrics=velocity_tracking_errors,
            episode_metrics=terrain_episode_metrics,
        ),
        TaskSpec(
            name="dog-rough-dr",
            description="dog-rough with dog-flat-dr's domain randomization (mass, CoM, inertia, gains, strength, latency).",
            env_cfg=dog_rough_dr_env_cfg,
            agent_cfg=dog_rough_agent_cfg,
            metrics=velocity_tracking_errors,
            episode_metrics=terrain_episode_metrics,
        ),
        TaskSpec(
            name="dog-rough-blind",
            description="dog-rough without a height scan: a student on 0.2 s of proprioception, distilled by DAgger from "
            "a dog-rough run (--teacher RUN).",
            env_cfg=dog_rough_blind_env_cfg,
            agent_cfg=dog_rough_blind_agent_cfg,
            metrics=velocity_tracking_errors,
            episode_metrics=terrain_episode_metrics,
            teacher_task="dog-rough",
        ),
        TaskSpec(
            name="humanoid-flat",
            description="A 21-DoF humanoid (our MJCF, G1 class) tracks commanded planar and yaw velocities; DR, pushes.",
            env_cfg=humanoid_flat_env_cfg,
            agent_cfg=humanoid_agent_cfg,
            metrics=velocity_tracking_errors,
        ),
        TaskSpec(
            name="humanoid-stairs",
            description="The humanoid walks up and down stairs: terrain curriculum, height scan, DR.",
            env_cfg=humanoid_stairs_env_cfg,
            agent_cfg=humanoid_agent_cfg,
            metrics=velocity_tracking_errors,
            episode_metrics=terrain_episode_metrics,
        ),
        TaskSpec(
            name="dog-stones",
            description="The dog crosses stepping stones: policy -> CoM accel, phase speed, footholds -> GRF QP + swing legs.",
            env_cfg=dog_stones_env_cfg,
            agent_cfg=dog_stones_agent_cfg,
        ),
        TaskSpec(
            name="arm-grasp-state",
            description="A 6-DoF arm (our MJCF) grasps a small sphere among distractors and lifts it; state observations.",
            env_cfg=arm_grasp_state_env_cfg,
            agent_cfg=arm_grasp_state_agent_cfg,
            metrics=grasp_metrics,
            expert=GraspExpert,
        ),
        TaskSpec(
            name="arm-grasp",
            description="The same arm grasps the sphere from its wrist camera (64x64 RGB over real photos, visual DR) "
            "and proprioception; DAgger from the scripted expert.",
            env_cfg=arm_grasp_env_cfg,
            agent_cfg=arm_grasp_agent_cfg,
            metrics=grasp_metrics,
            expert=GraspExpert,
        ),
        TaskSpec(
            name="arm-grasp-rgbd",
            description="arm-grasp with an RGB-D wrist camera (depth as a fourth uint8 channel): the sphere "
            "stands out of table photos of its own color.",
            env_cfg=arm_grasp_rgbd_env_cfg,
            agent_cfg=arm_grasp_agent_cfg,
            metrics=grasp_metrics,
            expert=GraspExpert,
        ),
        TaskSpec(
            name="hand-cube",
            description="A 16-DoF hand (our MJCF) turns a cube on its palm to random goal orientations (0.4 rad), "
            "new goal on success; asymmetric critic.",
            env_cfg=hand_cube_env_cfg,
            agent_cfg=hand_agent_cfg,
            metrics=hand_metrics,
            episode_metrics=hand_episode_metrics,
        ),
        TaskSpec(
            name="hand-cube-axis",
            description="hand-cube with goals about the vertical axis only: the quick check that it learns.",
            env_cfg=hand_cube_axis_env_cfg,
            agent_cfg=hand_agent_cfg,
            metrics=hand_metrics,
            episode_metrics=hand_episode_metrics,
        ),
        TaskSpec(
            name="hand-cube-dr",
            description="hand-cube with domain randomization (friction, cube mass, servo gains and strength, latency, "
            "observation noise).",
            env_cfg=hand_cube_dr_env_cfg,
            agent_cfg=hand_agent_cfg,
            metrics=hand_metrics,
            episode_metrics=hand_episode_metrics,
        ),
        TaskSpec(
            name="hand-cube-axis-dr",
            description="hand-cube-axis with hand-cube-dr's domain randomization: what DR costs and buys, measured "
            "where a policy learns in 30 minutes.",
            env_cfg=hand_cube_axis_dr_env_cfg,
            agent_cfg=hand_agent_cfg,
            metrics=hand_metrics,
            episode_metrics=hand_episode_metrics,
        ),
        TaskSpec(
            name="hand-cube-tilt",
            description="hand-cube with a curriculum of tilts off the face the cube rests on, following the share of "
            "goals reached (start from a hand-cube-axis policy with --init-from).",
            env_cfg=hand_cube_tilt_env_cfg,
            agent_cfg=hand_agent_cfg,
            metrics=hand_metrics,
            episode_metrics=hand_episode_metrics,
        ),
        TaskSpec(
            name="hand-cube-tilt-dr",
            description="hand-cube-tilt with hand-cube-dr's domain randomization (start from a hand-cube-axis-dr "
            "policy with --init-from).",
            env_cfg=hand_cube_tilt_dr_env_cfg,
            agent_cfg=hand_agent_cfg,
            metrics=hand_metrics,
            episode_metrics=hand_episode_metrics,
        ),
        TaskSpec(
            name="hand-cube-lstm",
            description="hand-cube with an LSTM policy and critic (Dactyl's choice).",
            env_cfg=hand_cube_env_cfg,
            agent_cfg=hand_recurrent_agent_cfg,
            metrics=hand_metrics,
            episode_metrics=hand_episode_metrics,
        ),
        TaskSpec(
            name="atari-pong",
            description="Atari 2600 Pong from pixels (ale-py, 84x84x4 grayscale, sticky actions); PPO with the Nature CNN.",
            env_cfg=pong_env_cfg,
            agent_cfg=atari_agent_cfg,
            max_return=21.0,
            kind="atari",
        ),
        TaskSpec(
            name="atari-breakout",
            description="Atari 2600 Breakout from pixels, as atari-pong (--env.game picks any of ale-py's 100+ games).",
            env_cfg=breakout_env_cfg,
            agent_cfg=atari_agent_cfg,
            kind="atari",
        ),
    ]
)
