"""In-hand cube reorientation (seed 001's headline task) with the Canter hand: turn the cube on the
palm until its orientation is within 0.4 rad of the goal; a new goal is drawn at once, and the
episode runs on until the cube drops, 50 goals are reached in a row, 20 s pass without reaching a
goal (the clock restarts at every goal, as Dactyl's and Isaac Gym's in-hand tasks count consecutive
successes), or 150 s pass in all (a bound for evaluation: 50 goals at 3 s each).
200 Hz physics, 33 Hz control (6 substeps). Relative finger targets, as HORA's and LEAP's hand
policies act: each control step moves the 16 position targets by 0.1 rad x action (in [-1, 1]), from
the home pose at every episode start, clamped to the joint ranges; the policy observes the targets.
Absolute targets around the home pose (home + 0.6 x action, this family's first setting) turned the
cube less than half as well in 30 minutes (BENCHMARKS.md section 18); `--env.actions.joint-pos.relative
False --env.actions.joint-pos.scale 0.6` brings them back.

The reward, per control step as Isaac Gym's and Isaac Lab's in-hand tasks state theirs, times the
0.01 reward scale their PPO (rl_games) trains with (the manager multiplies each weight by dt, so
the weights below are value x 0.01 / dt), which keeps returns and the value loss near 1:
- rotation 1 / (d + 0.1), d the rotation distance to the goal: 1 per step (10 at the goal);
- progress 50 x (d_before - d_after) per step, Dactyl's reward: 1 / (d + 0.1) is nearly flat far
  from the goal (0.5 at 1.9 rad, 0.63 at 1.5), so without it turning the cube the right way earned
  almost nothing until it was within ~0.5 rad (BENCHMARKS.md section 18); 50 per radian makes a
  quarter turn towards the goal worth ~80, a third of the success bonus;
- success bonus 250 per goal reached: worth more than any shaping between two goals;
- position -10 x |cube - spawn| (m): keep the cube on the palm;
- drop -50 per drop, on top of losing the rest of the episode;
- action -0.0002 x |a|^2 and action rate -0.01 x |a - a_prev|^2: smooth, feasible servo targets.

A curriculum of goal distances (training only: evaluation, `canter eval` and `canter bench
time-to-target`, always draws from the full set): goals start 0.4-0.6 rad from the cube (a turn of at
most 0.2 rad reaches them), and the range widens by 0.2 rad for every generation of episodes
(num_envs of them) that reach 10 goals in a row, up to pi, where goals are the full set's. Without it
the success bonus was too rare to be found (BENCHMARKS.md section 18: 13 M steps held the cube still).
`hand_cube_tilt_env_cfg` is the other curriculum for the full set (tilts off the face the cube rests
on, following the share of goals reached), started from a hand-cube-axis policy: 30 minutes of
hand-cube-axis and 90 of hand-cube-tilt reach 7.8 goals in a row on the full set on a 2-core Zen 5,
where hand-cube alone stayed near 0 (BENCHMARKS.md section 18).
"""

from __future__ import annotations

from canter import mdp
from canter.envs.env_cfg import EnvCfg
from canter.managers.curriculum import CurriculumTermCfg
from canter.managers.event import EventTermCfg
from canter.managers.observation import ObsGroupCfg, ObsTermCfg, unoise
from canter.managers.reward import RewardTermCfg
from canter.managers.termination import TerminationTermCfg
from canter.mdp import locomotion
from canter.mdp.actions import joint_position_action
from canter.scene.entity import actuators, bodies, geoms, joints, sensors
from canter.sim.config import SimCfg
from canter.sim.model import asset_path
from canter.tasks.hand import mdp as hand
from canter.tasks.hand.mdp import CubeGoalCommandCfg

DECIMATION = 6
STEP_DT = 0.005 * DECIMATION
SCALE = 0.01 / STEP_DT  # reward per control step -> weight
SPAWN = (0.02, 0.0, 0.245)  # the cube's centre resting on the palm, world frame (m)
FINGERTIPS = sensors(".*_tip_touch")
GOAL = {"command_name": "goal"}


def _policy_obs(noise: bool) -> ObsGroupCfg:
    def n(magnitude: float):
        return unoise(magnitude) if noise else None

    return ObsGroupCfg(
        terms={
            "joint_pos": ObsTermCfg(func=mdp.joint_pos_rel, noise=n(0.01)),
            "joint_vel": ObsTermCfg(func=mdp.joint_vel, scale=0.2, noise=n(0.1)),
            "cube_pos": ObsTermCfg(func=hand.cube_position_rel, params={"spawn": SPAWN}, scale=10.0, noise=n(0.002)),
            "cube_quat": ObsTermCfg(func=hand.cube_orientation, noise=n(0.01)),
            "cube_vel": ObsTermCfg(func=hand.cube_velocities, scale=0.2, noise=n(0.05)),
            "goal_quat": ObsTermCfg(func=hand.goal_orientation, params=GOAL),
            "goal_relative": ObsTermCfg(func=hand.goal_relative_rotation, params=GOAL),
            "actions": ObsTermCfg(func=mdp.last_action),
            "joint_target": ObsTermCfg(func=mdp.joint_pos_target),
        }
    )


def _critic_obs() -> ObsGroupCfg:
    """Asymmetric critic: the noiseless policy observations plus fingertip forces and the cube's
    mass and friction (randomized in hand-cube-dr)."""
    group = _policy_obs(noise=False)
    group.enable_corruption = False
    group.terms["fingertip_forces"] = ObsTermCfg(func=hand.fingertip_forces, params={"sensors": FINGERTIPS}, scale=0.1)
    group.terms["cube_mass"] = ObsTermCfg(func=locomotion.body_mass, params={"bodies": bodies("cube")}, scale=10.0)
    group.terms["cube_friction"] = ObsTermCfg(func=locomotion.geom_friction, params={"geoms": geoms("cube_geom")})
    return group


def hand_cube_env_cfg() -> EnvCfg:
    return EnvCfg(
        model_path=str(asset_path("hand_cube.xml")),
        default_keyframe="home",
        num_envs=1024,
        decimation=DECIMATION,
        episode_length_s=150.0,
        sim=SimCfg(),
        actions={"joint_pos": joint_position_action(scale=0.1, clip=(-1.0, 1.0), relative=True)},
        commands={"goal": CubeGoalCommandCfg(goals="so3", tolerance=0.4, goal_range_start=0.6)},
        curriculum={"goal_range": CurriculumTermCfg(func=hand.goal_range_curriculum,
                                                    params={**GOAL, "step": 0.2, "threshold": 10})},
        observations={"policy": _policy_obs(noise=False), "critic": _critic_obs()},
        events={
            "reset_joints": EventTermCfg(
                func=mdp.reset_joints_by_offset, mode="reset", params={"position_range": (-0.1, 0.1), "velocity_range": (0.0, 0.0)}
            ),
            "reset_cube": EventTermCfg(
                func=hand.reset_cube, mode="reset", params={"spawn": SPAWN, "position_range": 0.01, "orientation": "so3", "lift": 0.023},
            ),
        },
        rewards={
            "rotation": RewardTermCfg(func=hand.rotation_reward, weight=1.0 * SCALE, params=GOAL),
            "progress": RewardTermCfg(func=hand.rotation_progress, weight=50.0 * SCALE, params=GOAL),
            "success_bonus": RewardTermCfg(func=hand.goal_reached, weight=250.0 * SCALE, params=GOAL),
            "position": RewardTermCfg(func=hand.cube_displacement, weight=-10.0 * SCALE, params={"spawn": SPAWN}),
            "drop": RewardTermCfg(func=mdp.is_terminated, weight=-50.0 * SCALE),
            "action": RewardTermCfg(func=mdp.action_l2, weight=-0.0002 * SCALE),
            "action_rate": RewardTermCfg(func=mdp.action_rate_l2, weight=-0.01 * SCALE),
        },
        terminations={
            "time_out": TerminationTermCfg(func=mdp.time_out, time_out=True),
            "goal_time_out": TerminationTermCfg(func=hand.goal_time_out, time_out=True, params={**GOAL, "time_s": 20.0}),
            "success_streak": TerminationTermCfg(func=hand.success_streak, time_out=True, params={**GOAL, "count": 50}),
            "cube_dropped": TerminationTermCfg(
                func=hand.cube_dropped, params={"minimum_height": 0.17, "spawn": SPAWN, "max_distance": 0.1}
            ),
        },
    )


def hand_cube_axis_env_cfg() -> EnvCfg:
    """The easier variant: goals and initial orientations about the vertical axis only."""
    cfg = hand_cube_env_cfg()
    cfg.commands["goal"].goals = "z_axis"  # type: ignore[attr-defined]
    cfg.events["reset_cube"].params.update(orientation="z_axis", lift=0.0)
    return cfg


def hand_cube_tilt_env_cfg() -> EnvCfg:
    """hand-cube with a curriculum of tilts instead of goal distances: goals are a turn of 0.4..pi
    rad about the vertical from the face the cube rests on (the single-axis skill), tilted by up to
    `range` rad about a random horizontal axis; the range starts at 0, moves by 0.05 rad per num_envs
    goals reached and back by 4 x 0.05 per num_envs goals failed (a drop or 20 s without a goal), so
    it grows while more than 80 % of the goals are reached; at pi goals are the full set's (other
    faces up from pi/4 on). Episodes start the same way: upright at a random heading, tilted by up to
    the range, uniform over SO(3) at pi. Meant to start from a hand-cube-axis policy (`--init-from`)."""
    cfg = hand_cube_env_cfg()
    cfg.commands["goal"] = CubeGoalCommandCfg(goals="so3", tolerance=0.4, goal_range_start=0.0, goal_range_kind="tilt")
    cfg.curriculum["goal_range"] = CurriculumTermCfg(
        func=hand.goal_success_curriculum,
        params={**GOAL, "step": 0.05, "failure_weight": 4.0, "failures": ("cube_dropped", "goal_time_out")})
    cfg.events["reset_cube"].params.update(orientation="goal_tilt")
    return cfg


def hand_cube_dr_env_cfg() -> EnvCfg:
    """hand-cube with domain randomization per episode in the Dactyl / Isaac Lab spirit: cube and
    fingertip friction, cube mass, gravity noise on the cube, servo gains and strength, passive joint
    damping, action noise and bias, one step of action latency, and observation noise on every
    policy observation (not randomized: the cube's size). With relative finger targets the action
    noise and bias are integrated with the actions: a bias of b moves the targets by 0.1 b rad per
    step (up to 0.17 rad/s), a drift the policy sees in its `joint_target` observation and must
    correct, as a real hand's integrated commands would."""
    return _randomized(hand_cube_env_cfg())


def hand_cube_axis_dr_env_cfg() -> EnvCfg:
    """hand-cube-axis with hand-cube-dr's randomization: the single-axis goals, where a policy turns
    the cube within 30 minutes, so that what randomization costs and buys can be measured."""
    return _randomized(hand_cube_axis_env_cfg())


def hand_cube_tilt_dr_env_cfg() -> EnvCfg:
    """hand-cube-tilt with hand-cube-dr's randomization: the full goal set's route (tilts from a
    single-axis policy, `--init-from` a hand-cube-axis-dr run) on randomized physics."""
    return _randomized(hand_cube_tilt_env_cfg())


def _randomized(cfg: EnvCfg) -> EnvCfg:
    """`cfg` with hand-cube-dr's randomization (see hand_cube_dr_env_cfg), widened by a curriculum in
    training: the strength s by which every range is drawn (0 the nominal model, 1 the full ranges;
    canter.mdp.randomization) starts at 0 and moves with the share of goals reached, +0.05 per
    num_envs goals reached and -4 x 0.05 per num_envs episodes ended by a drop or 20 s without a goal
    (hand.RandomizationCurriculum); scores always use the full ranges.
    `--env.curriculum.randomization.params.start 1 --env.curriculum.randomization.params.step 0`
    randomizes at the full ranges from the start."""
    cfg.observations["policy"] = _policy_obs(noise=True)
    cfg.actions["joint_pos"].max_delay_steps = 1
    reset = {
        "cube_friction": (mdp.randomize_friction, {"geoms": geoms("cube_geom", ".*_tip"), "friction_range": (0.7, 1.3)}),
        "cube_mass": (mdp.randomize_added_mass, {"bodies": bodies("cube"), "mass_range": (-0.05, 0.1)}),
        "gravity_noise": (mdp.randomize_gravity_force, {"bodies": bodies("cube"), "std": 0.4}),
        "joint_damping": (mdp.randomize_joint_damping, {"joints": joints(), "scale_range": (0.3, 3.0)}),
        "action_noise": (mdp.randomize_action_noise, {"bias_range": (-0.05, 0.05), "noise_std_range": (0.0, 0.05)}),
        "pd_gains": (mdp.randomize_pd_gains, {"actuators": actuators(), "kp_scale_range": (0.75, 1.5), "kd_scale_range": (0.3, 3.0)}),
        "motor_strength": (mdp.randomize_motor_strength, {"actuators": actuators(), "scale_range": (0.8, 1.2)}),
        "action_delay": (mdp.randomize_action_delay, {"delay_range": (0, 1)}),
    }
    for name, (func, params) in reset.items():
        cfg.events[name] = EventTermCfg(func=func, mode="reset", params=params)
    cfg.curriculum["randomization"] = CurriculumTermCfg(
        func=hand.RandomizationCurriculum,
        params={**GOAL, "failures": ("cube_dropped", "goal_time_out"), "start": 0.0, "step": 0.05, "failure_weight": 4.0})
    return cfg
