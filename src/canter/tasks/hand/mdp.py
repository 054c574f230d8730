"""Terms of in-hand cube reorientation: the goal orientation as a command (resampled on success,
never on a timer), the cube's pose and velocities, rewards (rotation distance and its decrease,
success bonus, position), the drop, success-streak and per-goal time-out terminations, the cube
reset, and what `canter eval` reports.

The cube is the model's free body `cube` (its free joint's qpos: position, then (w, x, y, z)); the
goal is shown by the mocap body `goal` (a ghost cube).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import torch

from canter.core import selection
from canter.core.errors import ConfigError
from canter.core.math import (
    quat_conjugate,
    quat_from_yaw,
    quat_mul,
    random_quat,
    resting_pose,
    rotation_distance,
    wrap_to_pi,
    yaw_from_quat,
)
from canter.core.validate import fail, require_choice, require_positive
from canter.managers.command import CommandTerm, CommandTermCfg
from canter.managers.term import ManagerTerm, TermCfg

if TYPE_CHECKING:
    from canter.envs.manager_env import ManagerBasedRLEnv

CUBE_QPOS = slice(16, 23)  # after the hand's 16 joints: position (3), quaternion (4)
CUBE_QVEL = slice(16, 22)  # linear velocity (world), angular velocity (cube frame)


def cube_pos(env: ManagerBasedRLEnv) -> torch.Tensor:
    return env.sim.qpos[:, CUBE_QPOS][:, :3]


def cube_quat(env: ManagerBasedRLEnv) -> torch.Tensor:
    return env.sim.qpos[:, CUBE_QPOS][:, 3:7]


@dataclass(kw_only=True)
class CubeGoalCommandCfg(CommandTermCfg):
    """The goal orientation of the cube.

    goals: "so3" (uniform over all rotations) or "z_axis" (rotations about the world z axis only,
        the easier variant). tolerance: rotation distance (rad) that counts as reaching the goal.
    A goal is replaced as soon as it is reached, without ending the episode; `successes` counts the
    goals reached in a row this episode.
    goal_range_start: a curriculum's range (rad) at the start (None: no curriculum); a curriculum term
        (`goal_range_curriculum`, `goal_success_curriculum`) widens it, and from pi on goals are the
        full set's. Evaluation (`evaluation()`) always draws from the full set. What the range
        bounds is `goal_range_kind`:
    goal_range_kind: "turn": goals are a turn of tolerance..range rad from the cube's orientation at
        the time ("z_axis": about z, either way, from the cube's heading; "so3": about a random
        axis); needs tolerance < start. "tilt" ("so3" only): goals are the cube's resting pose (its
        face nearest to the ground turned flat on it, `resting_pose`) turned about the vertical by
        tolerance..pi rad either way, then tilted by 0..range rad about a random horizontal axis: at
        range 0 the single-axis task on whatever face the cube lies, from pi/4 on goals with another
        face up, which the cube reaches by rolling over; start >= 0.
    """

    goals: Literal["so3", "z_axis"] = "so3"
    tolerance: float = 0.4
    goal_range_start: float | None = None
    goal_range_kind: Literal["turn", "tilt"] = "turn"
    resampling_time_range: tuple[float, float] = (1e9, 1e9)  # goals change on success only

    def validate(self) -> None:
        super().validate()
        require_choice(self, "goals")
        require_choice(self, "goal_range_kind")
        require_positive(self, "tolerance")
        start = self.goal_range_start
        if self.goal_range_kind == "tilt":
            if self.goals != "so3":
                raise fail("goal_range_kind", f"'tilt' tilts goals off the vertical axis: it needs goals 'so3', got {self.goals!r}")
            if start is not None and not 0.0 <= start <= math.pi:
                raise fail("goal_range_start", f"need 0 <= start <= pi for tilts, got {start}")
        elif start is not None and not self.tolerance < start <= math.pi:
            raise fail("goal_range_start", f"need tolerance ({self.tolerance}) < start <= pi, got {start}")

    def evaluation(self) -> CubeGoalCommandCfg:
        """Scoring draws from the full goal set: no curriculum."""
        return dataclasses.replace(self, goal_range_start=None)

    def build(self, env: ManagerBasedRLEnv) -> CubeGoalCommand:
        return CubeGoalCommand(self, env)


class CubeGoalCommand(CommandTerm):
    """command: (num_envs, 4) goal quaternion. successes: (num_envs,) goals reached in a row this
    episode; episode_successes: the count of each env's last finished episode; reached: (num_envs,)
    bool, an env reached its goal this step; goal_start: (num_envs,) the episode step at which the
    current goal was set (0 at a reset, else the step that reached the last one), the clock of
    `goal_time_out`; reached_count: () goals reached by all envs since a curriculum term last took
    the count (`take_reached_count`)."""

    cfg: CubeGoalCommandCfg

    def __init__(self, cfg: CubeGoalCommandCfg, env: ManagerBasedRLEnv):
        super().__init__(cfg, env)
        n = env.num_envs
        self.goal = torch.zeros(n, 4, device=env.device)
        self.goal[:, 0] = 1.0
        self.successes = torch.zeros(n, device=env.device)
        self.episode_successes = torch.zeros(n, device=env.device)
        self.reached = torch.zeros(n, dtype=torch.bool, device=env.device)
        self.goal_start = torch.zeros(n, dtype=torch.long, device=env.device)
        self.reached_count = torch.zeros((), device=env.device)
        # the cube's distance from its goal when the last step ended (after a reached goal was
        # replaced): what rotation_progress measures this step's turn against
        self.last_distance = torch.zeros(n, device=env.device)
        # the curriculum's largest goal distance (rad, a device scalar; pi and above: the full set)
        start = cfg.goal_range_start if cfg.goal_range_start is not None else math.pi
        self.goal_range = torch.tensor(start, device=env.device)
        self.mocap_quat = env.sim.field("mocap_quat")

    @property
    def command(self) -> torch.Tensor:
        return self.goal

    def _draw(self, count: int) -> torch.Tensor:
        generator, device = self.env.generator, self.env.device
        if self.cfg.goals == "z_axis":
            yaw = (torch.rand(count, generator=generator, device=device) * 2.0 - 1.0) * torch.pi
            return quat_from_yaw(yaw)
        return random_quat(count, generator, device)

    def _draw_near(self, cube: torch.Tensor) -> torch.Tensor:
        """(k, 4) goals a turn of tolerance..goal_range rad from the cubes `cube` (k, 4)."""
        generator, device = self.env.generator, self.env.device
        count = cube.shape[0]
        u, sign = torch.rand(2, count, generator=generator, device=device)
        angle = self.cfg.tolerance + u * (self.goal_range - self.cfg.tolerance).clamp_min(0.0)
        angle = torch.where(sign < 0.5, -angle, angle)
        if self.cfg.goal_range_kind == "tilt":
            return self._draw_tilted(cube)
        if self.cfg.goals == "z_axis":
            # about z from the cube's heading: an upright goal, as the full set's are
            return quat_from_yaw(wrap_to_pi(yaw_from_quat(cube) + angle))
        axis = torch.randn(count, 3, generator=generator, device=device)
        axis = axis / torch.linalg.vector_norm(axis, dim=1, keepdim=True).clamp_min(1e-9)
        turn = torch.cat((torch.cos(0.5 * angle)[:, None], torch.sin(0.5 * angle)[:, None] * axis), dim=1)
        return quat_mul(turn, cube)

    def _draw_tilted(self, cube: torch.Tensor) -> torch.Tensor:
        """(k, 4) goals of the "tilt" kind for the cubes `cube` (k, 4): the resting pose, turned
        tolerance..pi rad about z either way, tilted 0..goal_range rad about a random horizontal axis."""
        return self._tilted(resting_pose(cube), self.cfg.tolerance)

    def _tilted(self, base: torch.Tensor, least_yaw: float) -> torch.Tensor:
        """(k, 4) `base` (k, 4) turned about z by least_yaw..pi rad either way, then tilted by
        0..goal_range rad about a random horizontal axis."""
        generator, device = self.env.generator, self.env.device
        u, sign, tilt, heading = torch.rand(4, base.shape[0], generator=generator, device=device)
        yaw = least_yaw + u * (math.pi - least_yaw)
        yaw = torch.where(sign < 0.5, -yaw, yaw)
        half = 0.5 * tilt * self.goal_range.clamp(0.0, math.pi)
        heading = heading * 2.0 * math.pi
        tilted = torch.stack((torch.cos(half), torch.sin(half) * torch.cos(heading), torch.sin(half) * torch.sin(heading),
                              torch.zeros_like(half)), dim=1)
        return quat_mul(tilted, quat_mul(quat_from_yaw(yaw), base))

    def draw_start(self, count: int) -> torch.Tensor:
        """(count, 4) initial cube orientations that follow the "tilt" curriculum: the model's upright
        cube at a random heading, tilted by 0..goal_range rad about a random horizontal axis (so other
        faces come to rest up from pi/4 on); uniform over SO(3) from pi on, and when scoring."""
        upright = torch.zeros(count, 4, device=self.env.device)
        upright[:, 0] = 1.0
        start = self._tilted(upright, 0.0)
        return torch.where(self.goal_range < math.pi, start, random_quat(count, self.env.generator, self.env.device))

    def take_reached_count(self) -> torch.Tensor:
        """() the goals reached by all envs since the last call (a device scalar; no host read)."""
        count = self.reached_count.clone()
        self.reached_count.zero_()
        return count

    def _resample(self, env_ids: torch.Tensor) -> None:
        goal = self._draw(selection.rows(env_ids))
        if self.cfg.goal_range_start is not None:
            # the curriculum's goals until its range reaches pi (a device-side choice: no host read)
            near = self._draw_near(selection.take(cube_quat(self.env), env_ids).float())
            goal = torch.where(self.goal_range < math.pi, near, goal)
        # one sign for each rotation (w >= 0), as the cube's orientation is observed: a composed goal
        # (a turn or tilt times the cube's pose) can come out as -q, a different input for the same goal
        goal = torch.where(goal[:, :1] < 0, -goal, goal)
        selection.put(self.goal, env_ids, goal)
        selection.put(self.mocap_quat[:, 0], env_ids, goal.to(self.mocap_quat.dtype))

    def distance(self) -> torch.Tensor:
        """(num_envs,) rotation distance (rad) of the cube from its goal."""
        return rotation_distance(cube_quat(self.env).float(), self.goal)

    def compute(self, dt: float) -> None:
        # a reached goal is replaced at once; the streak grows
        # in place: state carried between steps keeps its storage (a captured env step reads it there)
        self.reached.copy_(self.distance() <= self.cfg.tolerance)
        self.successes += self.reached
        self.reached_count += self.reached.sum()
        torch.where(self.reached, self.env.episode_length_buf, self.goal_start, out=self.goal_start)
        self.resample(self.env.select(self.reached))
        self.last_distance.copy_(self.distance())

    def reset(self, env_ids: torch.Tensor) -> None:
        selection.put(self.episode_successes, env_ids, selection.take(self.successes, env_ids))
        selection.fill(self.successes, env_ids, 0.0)
        selection.fill(self.reached, env_ids, False)
        selection.fill(self.goal_start, env_ids, 0)
        self.resample(env_ids)
        # the reset cube (events run before commands) against its new goal: the first step's reference
        selection.put(self.last_distance, env_ids, selection.take(self.distance(), env_ids))

    def evaluation(self) -> None:
        """From here on goals come from the full set (the curriculum, if any, is over)."""
        self.cfg = self.cfg.evaluation()
        self.goal_range.fill_(math.pi)

    def state_dict(self) -> dict[str, torch.Tensor]:
        return {"time_left": self.time_left.clone(), "goal": self.goal.clone(), "successes": self.successes.clone(),
                "episode_successes": self.episode_successes.clone(), "reached": self.reached.clone(),
                "last_distance": self.last_distance.clone(), "goal_range": self.goal_range.clone(),
                "goal_start": self.goal_start.clone(), "reached_count": self.reached_count.clone()}

    def load_state_dict(self, state: dict[str, torch.Tensor]) -> None:
        for name in ("time_left", "goal", "successes", "episode_successes", "reached"):
            getattr(self, name).copy_(state[name])
        if "goal_range" in state:  # checkpoints from before the goal curriculum: the config's start
            self.goal_range.copy_(state["goal_range"])
        if "reached_count" in state:  # checkpoints from before goal_success_curriculum: none pending
            self.reached_count.copy_(state["reached_count"])
        else:
            self.reached_count.zero_()
        # checkpoints from before the per-goal clock: goals count as set when their episode began
        if "goal_start" in state:
            self.goal_start.copy_(state["goal_start"])
        else:
            self.goal_start.zero_()
        # checkpoints from before rotation_progress: the distance the restored state implies
        self.last_distance = state["last_distance"].clone() if "last_distance" in state else self.distance()
        self.mocap_quat[:, 0].copy_(self.goal.to(self.mocap_quat.dtype))


def _goal(env: ManagerBasedRLEnv, command_name: str) -> CubeGoalCommand:
    term = env.command_manager.term(command_name)
    assert isinstance(term, CubeGoalCommand)
    return term


# --- observations -------------------------------------------------------------------------------


def cube_position_rel(env: ManagerBasedRLEnv, spawn: tuple[float, float, float]) -> torch.Tensor:
    """(num_envs, 3) cube position relative to its spawn point on the palm, m."""
    pos = cube_pos(env)
    # column by column with Python scalars: no host-to-device copy per step
    return torch.stack([pos[:, axis] - spawn[axis] for axis in range(3)], dim=1)


def cube_orientation(env: ManagerBasedRLEnv) -> torch.Tensor:
    """(num_envs, 4) cube quaternion, sign chosen so that w >= 0."""
    q = cube_quat(env)
    return torch.where(q[:, :1] < 0, -q, q)


def cube_velocities(env: ManagerBasedRLEnv) -> torch.Tensor:
    """(num_envs, 6) linear velocity (world, m/s) and angular velocity (cube frame, rad/s)."""
    return env.sim.qvel[:, CUBE_QVEL]


def goal_orientation(env: ManagerBasedRLEnv, command_name: str) -> torch.Tensor:
    return env.command_manager.get_command(command_name)


def goal_relative_rotation(env: ManagerBasedRLEnv, command_name: str) -> torch.Tensor:
    """(num_envs, 4) the rotation cube * conj(goal) that separates the cube from its goal, w >= 0."""
    goal = env.command_manager.get_command(command_name)
    diff = quat_mul(cube_quat(env).float(), quat_conjugate(goal))
    return torch.where(diff[:, :1] < 0, -diff, diff)


def fingertip_forces(env: ManagerBasedRLEnv, sensors) -> torch.Tensor:
    """(num_envs, 4) normal force on each fingertip, N (privileged)."""
    from canter.mdp.locomotion import _readings

    return _readings(env, sensors)


# --- rewards ------------------------------------------------------------------------------------


def rotation_reward(env: ManagerBasedRLEnv, command_name: str, eps: float = 0.1) -> torch.Tensor:
    """1 / (d + eps), d the rotation distance to the goal (rad): 10 at the goal, ~0.31 at pi."""
    return 1.0 / (_goal(env, command_name).distance() + eps)


def rotation_progress(env: ManagerBasedRLEnv, command_name: str) -> torch.Tensor:
    """The decrease of the rotation distance to the goal this step (rad; negative when the cube turns
    away), Dactyl's reward: it pays for turning the right way at any distance, where 1 / (d + eps)
    is nearly flat. Measured from the distance when the last step ended, so a goal replaced on
    success does not count as a step backwards."""
    term = _goal(env, command_name)
    return term.last_distance - term.distance()


def goal_reached(env: ManagerBasedRLEnv, command_name: str) -> torch.Tensor:
    """1 where the cube is within the tolerance of its goal (before the goal is replaced)."""
    term = _goal(env, command_name)
    return (term.distance() <= term.cfg.tolerance).float()


def cube_displacement(env: ManagerBasedRLEnv, spawn: tuple[float, float, float]) -> torch.Tensor:
    """Distance (m) of the cube from its spawn point: keep it on the palm."""
    return torch.linalg.vector_norm(cube_position_rel(env, spawn), dim=1)


# --- terminations -------------------------------------------------------------------------------


def cube_dropped(env: ManagerBasedRLEnv, minimum_height: float, spawn: tuple[float, float, float],
                 max_distance: float) -> torch.Tensor:
    """The cube fell below `minimum_height` (m, world) or left the palm by more than
    `max_distance` (m) horizontally."""
    rel = cube_position_rel(env, spawn)
    return (cube_pos(env)[:, 2] < minimum_height) | (torch.linalg.vector_norm(rel[:, :2], dim=1) > max_distance)


def success_streak(env: ManagerBasedRLEnv, command_name: str, count: int) -> torch.Tensor:
    """`count` goals reached in a row: the episode is complete."""
    return _goal(env, command_name).successes >= count


def goal_time_out(env: ManagerBasedRLEnv, command_name: str, time_s: float) -> torch.Tensor:
    """No goal reached for `time_s` seconds: the current goal has been pursued for that long (the
    clock restarts whenever a goal is reached, as in Dactyl and Isaac Gym's in-hand tasks, whose
    consecutive-success counts are measured so). A truncation: mark it time_out=True."""
    return env.episode_length_buf - _goal(env, command_name).goal_start >= math.ceil(time_s / env.step_dt)


# --- curriculum ---------------------------------------------------------------------------------


def goal_range_curriculum(env: ManagerBasedRLEnv, env_ids: torch.Tensor, command_name: str, step: float,
                          threshold: float) -> torch.Tensor:
    """Widen the goal command's range (its `goal_range_start` curriculum) by `step` rad for every
    num_envs episodes that end with at least `threshold` goals in a row: one generation of episodes
    that all met it widens it by `step`; the range stops at pi, the full goal set. Runs on the envs
    about to reset (their streaks are still this episode's), without a host read. Returns the range."""
    term = _goal(env, command_name)  # without a curriculum (or when scoring) the range is pi: no change
    good = (selection.take(term.successes, env_ids) >= threshold)
    if selection.is_mask(env_ids):
        good = good & env_ids
    widened = term.goal_range + step * good.sum() / env.num_envs
    term.goal_range.copy_(widened.clamp_max(math.pi))
    return term.goal_range.clone()


def goal_success_curriculum(env: ManagerBasedRLEnv, env_ids: torch.Tensor, command_name: str, step: float,
                            failure_weight: float, failures: tuple[str, ...]) -> torch.Tensor:
    """Move the goal command's range (its `goal_range_start` curriculum) with the share of goals
    reached: up by `step` rad for every num_envs goals reached (by any env, since the last call), down
    by `failure_weight` x `step` for every num_envs goals failed (episodes of `env_ids` ended by one of
    the termination terms `failures`, e.g. a drop or the per-goal time-out). The range grows while more
    than failure_weight / (failure_weight + 1) of the goals are reached (0.8 for 4: a mean streak of 4
    at that rate), so it follows what the policy can do; it stays within [start, pi], and from pi on
    goals are the full set's. Counting goals, not whole streaks, moves it minutes of wall time after a
    policy improves, where `goal_range_curriculum` waits for episodes that end. No host read. Returns
    the range."""
    term = _goal(env, command_name)
    failed = _failed_episodes(env, env_ids, failures)
    change = step * (term.take_reached_count() - failure_weight * failed.sum()) / env.num_envs
    start = term.cfg.goal_range_start if term.cfg.goal_range_start is not None else math.pi
    term.goal_range.copy_((term.goal_range + change).clamp(start, math.pi))
    return term.goal_range.clone()


def _failed_episodes(env: ManagerBasedRLEnv, env_ids: torch.Tensor, failures: tuple[str, ...]) -> torch.Tensor:
    """(rows of env_ids) bool: the episode ended by one of the termination terms `failures` (for a
    mask: num_envs rows, False outside it)."""
    manager = env.termination_manager
    unknown = [name for name in failures if name not in manager.names]
    if unknown:
        raise fail("failures", f"no termination term {unknown[0]!r} (terms: {', '.join(manager.names)})")
    ended = torch.zeros_like(manager.terminated)
    for name in failures:  # row by row: an int index is a view, a list would be copied to the device
        ended |= manager.term_dones[manager.names.index(name)]
    failed = selection.take(ended, env_ids)
    return failed & env_ids if selection.is_mask(env_ids) else failed


class RandomizationCurriculum(ManagerTerm):
    """Domain randomization that widens as the policy copes (Dactyl's automatic domain randomization,
    with one strength for all ranges): it owns `env.randomization_strength`, s in [0, 1], by which
    every randomization term pulls its draws towards the nominal model (see canter.mdp.randomization:
    s = 0 nominal physics, s = 1 the full ranges). s starts at `start` and moves when episodes end,
    by the share of goals reached, as `goal_success_curriculum` moves the goals: up by `step` for
    every num_envs goals reached in the ended episodes, down by `failure_weight` x `step` for every
    num_envs of them that failed (ended by a termination term in `failures`), so it grows while more
    than failure_weight / (failure_weight + 1) of the goals are reached. No host read.

    Training only (`training_only`): `EnvCfg.evaluation()` drops the term and a built env's
    `evaluation()` sets s to 1, so `canter eval` and time-to-target score on the full ranges.
    `--env.curriculum.randomization.params.start 1 --env.curriculum.randomization.params.step 0`
    randomizes at the full ranges throughout. Returns s (logged as Curriculum/randomization)."""

    training_only = True

    def __init__(self, cfg: TermCfg, env: ManagerBasedRLEnv):
        super().__init__(cfg, env)
        start = float(cfg.params.get("start", 0.0))
        if not 0.0 <= start <= 1.0:
            raise ConfigError(f"RandomizationCurriculum: start (the randomization strength) must be in [0, 1], got {start}")
        self.strength = torch.tensor(start, device=env.device)
        self.frozen = False
        env.randomization_strength = self.strength

    def __call__(self, env: ManagerBasedRLEnv, env_ids: torch.Tensor, command_name: str,  # type: ignore[override]
                 failures: tuple[str, ...], start: float = 0.0, step: float = 0.05,
                 failure_weight: float = 4.0) -> torch.Tensor:
        if self.frozen:
            return self.strength.clone()
        reached = selection.take(_goal(env, command_name).successes, env_ids)  # the ending episodes' goals
        if selection.is_mask(env_ids):
            reached = reached * env_ids
        failed = _failed_episodes(env, env_ids, failures)
        change = step * (reached.sum() - failure_weight * failed.sum()) / env.num_envs
        self.strength.copy_((self.strength + change).clamp(0.0, 1.0))
        return self.strength.clone()

    def evaluation(self) -> None:
        """The full ranges from here on (scoring a policy)."""
        self.frozen = True
        self.strength.fill_(1.0)

    def state_dict(self) -> dict[str, torch.Tensor]:
        return {"strength": self.strength.clone()}


# --- events -------------------------------------------------------------------------------------


def reset_cube(env: ManagerBasedRLEnv, env_ids: torch.Tensor, spawn: tuple[float, float, float],
               position_range: float, orientation: Literal["so3", "z_axis", "goal_tilt"], lift: float = 0.0,
               command_name: str = "goal") -> None:
    """The cube at its spawn point + U(+-position_range) in x and y, `lift` m higher, at rest, in a
    random orientation (uniform over SO(3); about z only; or "goal_tilt": as the goal command
    `command_name`'s tilt curriculum has it, `CubeGoalCommand.draw_start`). A tilted 6 cm cube reaches 2.2 cm
    lower than a flat one: "so3" resets lift it by that much, so that it drops onto the palm
    instead of starting inside it."""
    n, dtype, device = selection.rows(env_ids), env.sim.dtype, env.device
    pos = torch.stack([torch.full((n,), value, device=device) for value in spawn], dim=1)
    pos[:, :2] += (torch.rand(n, 2, generator=env.generator, device=device) * 2.0 - 1.0) * position_range
    pos[:, 2] += lift
    if orientation == "goal_tilt":  # the goal command's tilt curriculum (CubeGoalCommand.draw_start)
        quat = _goal(env, command_name).draw_start(n)
    elif orientation == "z_axis":
        quat = quat_from_yaw((torch.rand(n, generator=env.generator, device=device) * 2.0 - 1.0) * torch.pi)
    else:
        quat = random_quat(n, env.generator, device)
    selection.put(env.sim.qpos, env_ids, torch.cat((pos, quat), dim=1).to(dtype), CUBE_QPOS)
    selection.put(env.sim.qvel, env_ids, torch.zeros(n, 6, dtype=dtype, device=device), CUBE_QVEL)


# --- what `canter eval` reports -----------------------------------------------------------------


def hand_metrics(env: ManagerBasedRLEnv, command_name: str = "goal") -> dict[str, torch.Tensor]:
    """Per-step quantities averaged by `canter eval`: goals reached per minute (a success event
    times 60 / step_dt) and the rotation distance to the goal (rad)."""
    term = _goal(env, command_name)
    return {"goals_per_minute": term.reached.float() * (60.0 / env.step_dt), "rotation_distance": term.distance()}


def hand_episode_metrics(env: ManagerBasedRLEnv, command_name: str = "goal") -> dict[str, torch.Tensor]:
    """Per env, valid for the envs whose episode just ended: the goals reached in a row."""
    return {"consecutive_successes": _goal(env, command_name).episode_successes}
