"""Pieces shared by the legged tasks (the dog, the humanoid): the velocity-tracking policy
observations, the height scan, domain randomization and PPO settings."""

from __future__ import annotations

from canter import mdp
from canter.envs.env_cfg import EnvCfg
from canter.managers.event import EventTermCfg
from canter.managers.observation import ObsGroupCfg, ObsTermCfg, unoise
from canter.managers.symmetry import ANGULAR, LINEAR, VELOCITY_COMMAND, mirror_of, mirror_signs
from canter.managers.termination import TerminationTermCfg
from canter.mdp.commands import UniformVelocityCommandCfg
from canter.rl.config import AlgoCfg, PolicyCfg
from canter.rl.runner import RunnerCfg
from canter.scene.entity import Sel, actuators, bodies


def velocity_policy_obs() -> ObsGroupCfg:
    """What a velocity-tracking policy sees (noisy, base frame): base velocities, gravity, the
    command, joint positions (about the default pose) and velocities, the last action; every term
    with its left-right mirror."""
    return ObsGroupCfg(
        terms={
            "base_lin_vel": ObsTermCfg(func=mdp.base_lin_vel, noise=unoise(0.1), mirror=mirror_signs(*LINEAR)),
            "base_ang_vel": ObsTermCfg(func=mdp.base_ang_vel, noise=unoise(0.2), scale=0.25, mirror=mirror_signs(*ANGULAR)),
            "projected_gravity": ObsTermCfg(func=mdp.projected_gravity, noise=unoise(0.05), mirror=mirror_signs(*LINEAR)),
            "velocity_commands": ObsTermCfg(
                func=mdp.generated_commands, params={"command_name": "base_velocity"}, mirror=mirror_signs(*VELOCITY_COMMAND)
            ),
            "joint_pos": ObsTermCfg(func=mdp.joint_pos_rel, noise=unoise(0.01), mirror=mirror_of("joints")),
            "joint_vel": ObsTermCfg(func=mdp.joint_vel, noise=unoise(1.5), scale=0.05, mirror=mirror_of("joints")),
            "actions": ObsTermCfg(func=mdp.last_action, mirror=mirror_of("actions")),
        }
    )


def add_runaway_guards(cfg: EnvCfg, max_joint_vel: float = 250.0, max_root_speed: float = 20.0) -> None:
    """Keeps one env whose simulation runs away from poisoning the batch (legged_gym's clips):
    every vector observation and the raw actions bounded at +-100, and a `diverged` termination
    for joint (or root spin) speeds above `max_joint_vel` rad/s or a root above `max_root_speed`
    m/s. Measured with random actions of std 3 (far wilder than any policy): joints peak at 93
    rad/s on the humanoid and 64 on the dog, the root at 3.5 m/s, so they fire only on a broken
    simulation. Without them humanoid-stairs' value loss went to NaN after 107 minutes and the
    mean return to -1e18 (actions of 1e8 in one env, BENCHMARKS §17)."""
    cfg.clip_actions = 100.0
    for group in cfg.observations.values():
        group.clip = 100.0
    cfg.terminations["diverged"] = TerminationTermCfg(
        func=mdp.physics_diverged, params={"max_joint_vel": max_joint_vel, "max_root_speed": max_root_speed}
    )


def heading_velocity_command(lin_vel_x: tuple[float, float], lin_vel_y: tuple[float, float]) -> UniformVelocityCommandCfg:
    """Planar velocity commands redrawn every 10 s, the yaw rate steering toward a random heading
    (stiffness 0.5, within +-1 rad/s); 2 % of the envs are told to stand still."""
    return UniformVelocityCommandCfg(
        resampling_time_range=(10.0, 10.0),
        lin_vel_x=lin_vel_x,
        lin_vel_y=lin_vel_y,
        ang_vel_z=(-1.0, 1.0),
        heading_command=True,
        heading_control_stiffness=0.5,
        rel_heading_envs=1.0,
        rel_standing_envs=0.02,
    )


def add_height_scan(cfg: EnvCfg, noise: float) -> None:
    """A 1.6 x 1.0 m height scan at 0.1 m (17 x 11 points) in the policy group (with uniform noise
    of `noise` m) and the critic group (noiseless), clipped to +-1 m."""
    grid = {"grid_size": (1.6, 1.0), "resolution": 0.1}
    cfg.observations["policy"].terms["height_scan"] = ObsTermCfg(
        func=mdp.HeightScan, params=grid, noise=unoise(noise), clip=(-1.0, 1.0), mirror=mirror_of("scan")
    )
    cfg.observations["critic"].terms["height_scan"] = ObsTermCfg(
        func=mdp.HeightScan, params=dict(grid), clip=(-1.0, 1.0), mirror=mirror_of("scan")
    )


def legged_agent_cfg() -> RunnerCfg:
    """PPO for velocity tracking: rsl_rl-style settings, networks sized for a CPU."""
    return RunnerCfg(
        policy=PolicyCfg(
            actor_hidden_dims=(256, 128, 64),
            critic_hidden_dims=(256, 128, 64),
            activation="elu",
            # 0.5, not rsl_rl's 1.0: with 1.0 x action scale 0.25 the dog shakes so hard that its
            # penalties outweigh tracking and most robots fall within 1.6 s; early policies then
            # learn that ending the episode pays (measured: episode length 137 -> 21 steps)
            init_noise_std=0.5,
            actor_obs_groups=("policy",),
            critic_obs_groups=("critic",),
        ),
        algo=AlgoCfg(
            num_steps_per_env=24,
            num_learning_epochs=5,
            num_mini_batches=4,
            learning_rate=1e-3,
            schedule="adaptive",
            desired_kl=0.01,
            entropy_coef=0.01,
            gamma=0.99,
            lam=0.95,
            max_grad_norm=1.0,
        ),
        max_iterations=1500,
        save_interval=50,
    )


def add_friction_randomization(cfg: EnvCfg, *, foot_geoms: Sel) -> None:
    """Foot friction sampled per episode at reset, U(0.4, 1.25) (sliding): with the pushes, legged_gym's
    rough-terrain randomization; the first entry of add_domain_randomization's list."""
    cfg.events["foot_friction"] = EventTermCfg(
        func=mdp.randomize_friction, mode="reset", params={"geoms": foot_geoms, "friction_range": (0.4, 1.25)}
    )


def add_domain_randomization(
    cfg: EnvCfg,
    *,
    foot_geoms: Sel,
    base_body: str,
    mass_range: tuple[float, float],
    max_delay_steps: int = 2,
) -> None:
    """Seed 004's list, sampled per episode at reset: foot friction, base mass (kg added) and CoM,
    inertia, PD gains, motor strength, actuator latency (0..max_delay_steps control steps); sensor
    noise is in the observation terms, pushes are interval events."""
    cfg.actions["joint_pos"].max_delay_steps = max_delay_steps
    add_friction_randomization(cfg, foot_geoms=foot_geoms)
    base = bodies(base_body)
    reset = {
        f"{base_body}_mass": (mdp.randomize_added_mass, {"bodies": base, "mass_range": mass_range}),
        f"{base_body}_com": (mdp.randomize_com_offset, {"bodies": base, "offset_range": (-0.02, 0.02)}),
        "inertia": (mdp.randomize_inertia_scale, {"bodies": bodies(".*"), "scale_range": (0.9, 1.1)}),
        "pd_gains": (mdp.randomize_pd_gains, {"actuators": actuators(), "kp_scale_range": (0.9, 1.1), "kd_scale_range": (0.8, 1.2)}),
        "motor_strength": (mdp.randomize_motor_strength, {"actuators": actuators(), "scale_range": (0.9, 1.1)}),
        "action_delay": (mdp.randomize_action_delay, {"delay_range": (0, max_delay_steps)}),
    }
    for name, (func, params) in reset.items():
        cfg.events[name] = EventTermCfg(func=func, mode="reset", params=params)
