"""The scripted grasping expert (seed 002's FSM expert): full state access, a batched finite-state
machine in torch, one phase per env, no Python loop over envs.

    APPROACH -> DESCEND -> CLOSE -> LIFT -> HOLD
    approach: gripper open, tcp to `hover_height` above the sphere (straight up first when low);
    descend: down to the sphere's centre + `grasp_offset`, following the sphere in x, y;
    close: close the gripper in place for `close_s`; lift: raise the tcp to `lift_height` above the
    table; hold: stay there (the env's success term ends the episode after 1 s).
    Recovery: the sphere rolled away while descending, the pads found nothing within
    `close_timeout_s`, or the sphere left the gripper while lifting: back to APPROACH.

Every transition reads the current state, so the expert also labels states a student visited
(DAgger). An env whose episode just started (episode_length_buf == 0) restarts at APPROACH.
Actions are in the task's action space (canter.tasks.grasp.action): tcp deltas, yaw 0, gripper.
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
    """Heights and tolerances in m, times in s."""

    hover_height: float = 0.08  # tcp above the sphere's centre before descending
    grasp_offset: float = 0.005  # tcp above the sphere's centre when closing
    min_tcp_height: float = 0.022  # lowest tcp height above the table (pads stay off it)
    lift_height: float = 0.25  # tcp height above the table when lifted
    xy_tolerance: float = 0.006
    z_tolerance: float = 0.01
    lost_xy: float = 0.02  # sphere this far (x, y) from the tcp while descending: re-approach
    lost_distance: float = 0.03  # sphere this far from the tcp while lifting: re-approach
    force: float = 1.0  # N on each pad that counts as contact
    close_s: float = 0.3
    close_timeout_s: float = 1.0


@dataclass
class GraspState:
    """What the expert reads, world frame: tcp (N, 3), sphere (N, 3) m, pad forces (N, 2) N."""

    tcp: torch.Tensor
    sphere: torch.Tensor
    forces: torch.Tensor


def _targets_z(state: GraspState, cfg: GraspExpertCfg) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(hover, grasp, lift) tcp heights, each (N,), m."""
    floor = grasp.TABLE_TOP + cfg.min_tcp_height
    hover = state.sphere[:, 2] + cfg.hover_height
    grasp_z = torch.clamp(state.sphere[:, 2] + cfg.grasp_offset, min=floor)
    return hover, grasp_z, torch.full_like(hover, grasp.TABLE_TOP + cfg.lift_height)


def next_phase(
    phase: torch.Tensor, phase_time: torch.Tensor, state: GraspState, cfg: GraspExpertCfg
) -> torch.Tensor:
    """(N,) long: the phase after one transition check. phase_time: (N,) s spent in `phase`."""
    hover, grasp_z, lift_z = _targets_z(state, cfg)
    xy_error = (state.sphere[:, :2] - state.tcp[:, :2]).norm(dim=1)
    z = state.tcp[:, 2]
    pressed = (state.forces > cfg.force).all(dim=1)
    held = pressed & ((state.sphere - state.tcp).norm(dim=1) < cfg.lost_distance)
    aligned = xy_error < cfg.xy_tolerance
    rules = (  # (from, condition, to), checked in order; the first that holds applies
        (APPROACH, aligned & ((z - hover).abs() < cfg.z_tolerance), DESCEND),
        (DESCEND, xy_error > cfg.lost_xy, APPROACH),
        (DESCEND, aligned & (z - grasp_z < 0.5 * cfg.z_tolerance), CLOSE),
        (CLOSE, (phase_time >= cfg.close_s) & pressed, LIFT),
        (CLOSE, phase_time >= cfg.close_timeout_s, APPROACH),
        (LIFT, ~held, APPROACH),
        (LIFT, z >= lift_z - cfg.z_tolerance, HOLD),
        (HOLD, ~held, APPROACH),
    )
    result = phase.clone()
    decided = torch.zeros_like(phase, dtype=torch.bool)
    for source, condition, target in rules:
        fire = (phase == source) & condition & ~decided
        result = torch.where(fire, torch.full_like(phase, target), result)
        decided |= fire
    return result


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
    """`expert(env) -> (num_envs, 5)` float32 actions for the env's current state; keeps each env's
    phase and time in phase. Build it once per env: GraspExpert(env)."""

    def __init__(self, env: ManagerBasedRLEnv, cfg: GraspExpertCfg | None = None, action_term: str = "ee_delta"):
        self.cfg = cfg or GraspExpertCfg()
        scene = env.scene
        self.sphere = grasp.SPHERE.resolve(scene)
        self.site = grasp.TCP.resolve(scene)
        self.touch = grasp.FINGER_TOUCH.resolve(scene)
        self.position_scale = float(env.action_manager.term(action_term).cfg.position_scale)  # type: ignore[attr-defined]
        self.step_dt = env.step_dt
        self.phase = torch.full((env.num_envs,), APPROACH, dtype=torch.long, device=env.device)
        self.phase_time = torch.zeros(env.num_envs, dtype=env.sim.dtype, device=env.device)

    def read_state(self, env: ManagerBasedRLEnv) -> GraspState:
        return GraspState(
            tcp=grasp.tcp_position(env, self.site),
            sphere=grasp.body_positions(env, self.sphere)[:, 0],
            forces=grasp.finger_forces(env, self.touch),
        )

    def __call__(self, env: ManagerBasedRLEnv) -> torch.Tensor:
        started = env.episode_length_buf == 0
        self.phase.masked_fill_(started, APPROACH)
        self.phase_time.masked_fill_(started, 0.0)
        state = self.read_state(env)
        phase = next_phase(self.phase, self.phase_time, state, self.cfg)
        self.phase_time = torch.where(phase == self.phase, self.phase_time + self.step_dt, torch.zeros_like(self.phase_time))
        self.phase = phase
        return expert_action(phase, state, self.cfg, self.position_scale).float()

    def state_dict(self) -> dict[str, torch.Tensor]:
        """The per-env FSM state (for checkpoints of runs that label with this expert)."""
        return {"phase": self.phase.clone(), "phase_time": self.phase_time.clone()}

    def load_state_dict(self, state: dict[str, torch.Tensor]) -> None:
        self.phase.copy_(state["phase"])
        self.phase_time.copy_(state["phase_time"])


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
