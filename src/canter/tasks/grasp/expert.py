"""The scripted grasping expert (seed 002's expert): full state access, batched in torch, no
Python loop over envs, and **a feedback law of the state it is shown**: each step's phase is a
function of the current state alone (tcp, sphere, pad forces, finger opening), never of a memory.

    APPROACH -> DESCEND -> CLOSE -> LIFT -> HOLD
    held (both pads press, the sphere at the tcp): LIFT the tcp to `lift_height` above the table
        (HOLD once there; the env's success term ends the episode after 1 s);
    fingers shut on nothing: APPROACH (reopen, rise to hover, try again);
    at the grasp pose (aligned over the sphere, tcp at its centre + `grasp_offset`): CLOSE;
    fingers open and aligned (or a little off, already below the hover height): DESCEND, following
        the sphere in x, y;
    otherwise APPROACH: gripper open, tcp to `hover_height` above the sphere (straight up first
        when low and away from it, so the fingers clear it).

Why no memory: DAgger asks the expert to label the states a student visits. A finite-state machine
(the first version: phase timers, transitions only from the phase it was in) labels a frame from a
phase the frame does not show (fingers shut on nothing but "lifting"; the tcp beside the sphere but
"closing"), and its student, trained on those labels, timed out once it drove (BENCHMARKS §12).
The expert keeps no per-env state, so any state a student reaches gets the label the state calls
for. Actions are in the task's action space (canter.tasks.grasp.action): tcp deltas, yaw 0, gripper.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch

from canter.tasks.grasp import mdp as grasp
from canter.tasks.grasp.action import ACTION_DIM

if TYPE_CHECKING:
    from canter.envs.manager_env import ManagerBasedRLEnv

APPROACH, DESCEND, CLOSE, LIFT, HOLD = range(5)
PHASE_NAMES = ("approach", "descend", "close", "lift", "hold")


@dataclass(kw_only=True)
class GraspExpertCfg:
    """Heights, tolerances and finger openings in m, forces in N."""

    hover_height: float = 0.08  # tcp above the sphere's centre before descending
    grasp_offset: float = 0.005  # tcp above the sphere's centre when closing
    min_tcp_height: float = 0.022  # lowest tcp height above the table (pads stay off it)
    lift_height: float = 0.25  # tcp height above the table when lifted
    xy_tolerance: float = 0.006
    z_tolerance: float = 0.01
    lost_xy: float = 0.02  # below the hover height, descend while the sphere is this close in x, y
    lost_distance: float = 0.03  # the sphere counts as held only this close to the tcp
    force: float = 1.0  # N on each pad that counts as contact
    # finger opening (mean finger joint position): 0.04 open, 0.0192 around the 2-cm sphere
    open_opening: float = 0.035  # at least this: open, may descend over the sphere
    empty_opening: float = 0.012  # below this with no pad pressing: shut on nothing


@dataclass
class GraspState:
    """What the expert reads, world frame: tcp (N, 3), sphere (N, 3) m, pad forces (N, 2) N,
    finger opening (N,) m (the mean of the two finger joints)."""

    tcp: torch.Tensor
    sphere: torch.Tensor
    forces: torch.Tensor
    opening: torch.Tensor


def _targets_z(state: GraspState, cfg: GraspExpertCfg) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(hover, grasp, lift) tcp heights, each (N,), m."""
    floor = grasp.TABLE_TOP + cfg.min_tcp_height
    hover = state.sphere[:, 2] + cfg.hover_height
    grasp_z = torch.clamp(state.sphere[:, 2] + cfg.grasp_offset, min=floor)
    return hover, grasp_z, torch.full_like(hover, grasp.TABLE_TOP + cfg.lift_height)


def phase_of(state: GraspState, cfg: GraspExpertCfg) -> torch.Tensor:
    """(N,) long: the phase the state calls for (see the module doc; the first rule that holds)."""
    hover, grasp_z, lift_z = _targets_z(state, cfg)
    xy_error = (state.sphere[:, :2] - state.tcp[:, :2]).norm(dim=1)
    z = state.tcp[:, 2]
    pressed = (state.forces > cfg.force).all(dim=1)
    held = pressed & ((state.sphere - state.tcp).norm(dim=1) < cfg.lost_distance)
    shut_empty = (state.opening < cfg.empty_opening) & ~pressed
    opened = state.opening >= cfg.open_opening
    aligned = xy_error < cfg.xy_tolerance
    at_grasp = aligned & (z - grasp_z < 0.5 * cfg.z_tolerance)
    descend = opened & ((aligned & (z < hover + cfg.z_tolerance)) | ((xy_error < cfg.lost_xy) & (z < hover - cfg.z_tolerance)))
    rules = (  # (condition, phase), checked in order; the first that holds applies
        (held & (z >= lift_z - cfg.z_tolerance), HOLD),
        (held, LIFT),
        (shut_empty, APPROACH),
        (at_grasp, CLOSE),
        (descend, DESCEND),
    )
    phase = torch.full_like(z, APPROACH, dtype=torch.long)
    for condition, value in reversed(rules):
        phase = torch.where(condition, torch.full_like(phase, value), phase)
    return phase


def expert_action(phase: torch.Tensor, state: GraspState, cfg: GraspExpertCfg, position_scale: float) -> torch.Tensor:
    """(N, 5) actions of each phase: tcp delta towards the phase's target / position_scale, clipped
    to [-1, 1]; yaw 0; gripper -1 (open) while approaching and descending, +1 (closed) after."""
    hover, grasp_z, lift_z = _targets_z(state, cfg)
    tcp, sphere = state.tcp, state.sphere
    # approach: straight up first while low and away from the sphere, so the fingers clear it
    low = (tcp[:, 2] < hover - 2 * cfg.z_tolerance) & ((sphere[:, :2] - tcp[:, :2]).norm(dim=1) > 2 * cfg.xy_tolerance)
    approach_xy = torch.where(low.unsqueeze(1), tcp[:, :2], sphere[:, :2])
    target_xy = torch.where((phase == APPROACH).unsqueeze(1), approach_xy, sphere[:, :2])
    target_xy = torch.where((phase >= CLOSE).unsqueeze(1), tcp[:, :2], target_xy)
    target_z = torch.where(phase == APPROACH, hover, torch.where(phase >= LIFT, lift_z, grasp_z))
    target = torch.cat((target_xy, target_z.unsqueeze(1)), dim=1)
    action = torch.zeros(phase.shape[0], ACTION_DIM, dtype=tcp.dtype, device=tcp.device)
    action[:, 0:3] = ((target - tcp) / position_scale).clamp(-1.0, 1.0)
    action[:, 4] = torch.where(phase >= CLOSE, 1.0, -1.0)
    return action


class GraspExpert:
    """`expert(env) -> (num_envs, 5)` float32 actions for the env's current state. Stateless: the
    last phase each env was given is kept in `phase` for logging and tests only."""

    def __init__(self, env: ManagerBasedRLEnv, cfg: GraspExpertCfg | None = None, action_term: str = "ee_delta"):
        self.cfg = cfg or GraspExpertCfg()
        scene = env.scene
        self.sphere = grasp.SPHERE.resolve(scene)
        self.site = grasp.TCP.resolve(scene)
        self.touch = grasp.FINGER_TOUCH.resolve(scene)
        self.fingers = grasp.FINGER_JOINTS.resolve(scene)
        self.position_scale = float(env.action_manager.term(action_term).cfg.position_scale)  # type: ignore[attr-defined]
        self.phase = torch.full((env.num_envs,), APPROACH, dtype=torch.long, device=env.device)

    def read_state(self, env: ManagerBasedRLEnv) -> GraspState:
        return GraspState(
            tcp=grasp.tcp_position(env, self.site),
            sphere=grasp.body_positions(env, self.sphere)[:, 0],
            forces=grasp.finger_forces(env, self.touch),
            opening=env.sim.qpos[:, self.fingers.qpos_adr].mean(dim=1),
        )

    def __call__(self, env: ManagerBasedRLEnv) -> torch.Tensor:
        state = self.read_state(env)
        self.phase = phase_of(state, self.cfg)
        return expert_action(self.phase, state, self.cfg, self.position_scale).float()


def expert_success_rate(env: ManagerBasedRLEnv, expert: Callable[[ManagerBasedRLEnv], torch.Tensor]) -> tuple[float, float]:
    """Run every env until it has ended one episode (from env.reset()) and return (fraction of
    those first episodes that ended by the `success` term, mean seconds to success over them)."""
    env.reset()
    success_index = env.termination_manager.names.index("success")
    ended = torch.zeros(env.num_envs, dtype=torch.bool, device=env.device)
    succeeded = torch.zeros_like(ended)
    seconds = torch.zeros(env.num_envs, device=env.device)
    for _ in range(env.max_episode_length + 1):
        length = env.episode_length_buf.clone()
        _, _, terminated, truncated, _ = env.step(expert(env))
        done = (terminated | truncated) & ~ended
        success = env.termination_manager.term_dones[success_index]
        succeeded |= done & success
        seconds = torch.where(done, (length + 1).float() * env.step_dt, seconds)
        ended |= done
        if bool(ended.all()):
            break
    rate = float(succeeded.float().mean())
    mean_s = float(seconds[succeeded].mean()) if bool(succeeded.any()) else float("nan")
    return rate, mean_s
