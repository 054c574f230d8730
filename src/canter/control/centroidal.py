"""Centroidal body controller: single-rigid-body trunk dynamics turn a desired CoM acceleration into
the wrench the stance feet must apply, a batched QP distributes it over the feet as ground reaction
forces, and the stance legs produce them through τ = −Jᵀ f.

    w_des = [ m (a_des + g e_z) ;  I_w α_des + ω × I_w ω ],   I_w = R I_b Rᵀ
    f* = argmin ½ (G f − w_des)ᵀ W (G f − w_des) + ½ α ‖f‖²   s.t. friction pyramid, fz bounds,
         f_i = 0 for swing feet                                 (canter.control.qp.grf_problem)
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Literal

import torch

from canter.control.qp import QPInfo, grf_problem, solve
from canter.core import selection
from canter.core.validate import (
    Validated,
    fail,
    require_at_least,
    require_choice,
    require_finite,
    require_positive,
)

GRAVITY = 9.81


@dataclass(kw_only=True)
class BodyControllerCfg(Validated):
    """mu: friction coefficient of the pyramid (below the true one for margin). fz_min, fz_max:
    normal force bounds of a stance foot, N. wrench_weight: diagonal of W (force N⁻², torque
    (N·m)⁻²). force_reg: α. qp_iterations: the solver's fixed iteration budget (warm-started from the
    previous tick). solver: "qp" solves the QP; "static" skips it and splits the desired force evenly
    over the stance feet (no torque control, no friction limits): a cheap baseline for measuring what
    the QP costs."""

    mu: float = 0.6
    fz_min: float = 3.0
    fz_max: float = 150.0
    wrench_weight: tuple[float, float, float, float, float, float] = (1.0, 1.0, 1.0, 10.0, 10.0, 10.0)
    force_reg: float = 1e-4
    qp_iterations: int = 10
    solver: Literal["qp", "static"] = "qp"

    config_name = "body"

    def validate(self) -> None:
        require_positive(self, "mu")
        require_at_least(self, "fz_min", 0.0)
        require_finite(self, "fz_max")
        if not self.fz_min < self.fz_max:
            raise fail("fz_min", f"need fz_min < fz_max, got {self.fz_min}, {self.fz_max}")
        require_at_least(self, "qp_iterations", 1, integer=True)
        require_choice(self, "solver")


def desired_wrench(
    mass: float, inertia_w: torch.Tensor, acc_lin: torch.Tensor, acc_ang: torch.Tensor, ang_vel: torch.Tensor
) -> torch.Tensor:
    """(B, 6) contact wrench about the CoM (force N, torque N·m, world frame) that gives the single
    rigid body the accelerations acc_lin (B, 3) m/s² and acc_ang (B, 3) rad/s² under gravity;
    inertia_w (B, 3, 3) world-frame inertia, ang_vel (B, 3) world-frame rad/s."""
    gravity = torch.zeros_like(acc_lin)
    gravity[:, 2] = GRAVITY
    force = mass * (acc_lin + gravity)
    spin = (inertia_w @ ang_vel[..., None])[..., 0]
    torque = (inertia_w @ acc_ang[..., None])[..., 0] + torch.linalg.cross(ang_vel, spin, dim=-1)
    return torch.cat((force, torque), dim=-1)


def world_inertia(rot: torch.Tensor, inertia_b: torch.Tensor) -> torch.Tensor:
    """(B, 3, 3) I_w = R I_b Rᵀ for rotations rot (B, 3, 3) and a body-frame inertia (3, 3)."""
    return rot @ inertia_b @ rot.transpose(-1, -2)


def wrench_of_forces(foot_pos_rel: torch.Tensor, forces: torch.Tensor) -> torch.Tensor:
    """(B, 6) total force and torque about the CoM of foot forces (B, 4, 3) applied at foot
    positions relative to the CoM (B, 4, 3)."""
    return torch.cat((forces.sum(dim=1), torch.linalg.cross(foot_pos_rel, forces, dim=-1).sum(dim=1)), dim=-1)


class BodyController:
    """Ground reaction forces of the stance feet for a whole batch, warm-started tick to tick.

    last_info: the solver's QPInfo of the last solve (None before the first or with solver
    "static"). forces: (B, 4, 3) the last forces, N.
    """

    def __init__(self, cfg: BodyControllerCfg, num_envs: int, device: torch.device, dtype: torch.dtype):
        self.cfg = cfg
        self.weight = torch.tensor(cfg.wrench_weight, dtype=dtype, device=device)
        self.forces = torch.zeros(num_envs, 4, 3, dtype=dtype, device=device)
        self.duals = torch.zeros(num_envs, 20, dtype=dtype, device=device)
        self.last_info: QPInfo | None = None
        self.timing = False  # accumulate the wall time of solves in solve_seconds (CPU benchmarks)
        self.solve_seconds = 0.0

    def solve(self, foot_pos_rel: torch.Tensor, stance: torch.Tensor, wrench: torch.Tensor) -> torch.Tensor:
        """(B, 4, 3) ground reaction forces (N, world frame) for foot positions relative to the CoM
        (B, 4, 3), stance (B, 4) bool and the desired wrench (B, 6). Swing feet get exactly zero."""
        if self.cfg.solver == "static":
            count = stance.sum(dim=1, keepdim=True).clamp_min(1).to(wrench.dtype)
            share = wrench[:, None, 0:3] / count[..., None]
            forces = torch.where(stance[..., None], share, torch.zeros_like(share))
            forces[..., 2] = forces[..., 2].clamp(0.0, self.cfg.fz_max) * stance
            self.forces.copy_(forces)
            return forces
        cfg = self.cfg
        P, q, A, lower, upper = grf_problem(
            foot_pos_rel, stance, wrench, mu=cfg.mu, fz_min=cfg.fz_min, fz_max=cfg.fz_max,
            wrench_weight=self.weight, force_reg=cfg.force_reg,
        )
        start = time.perf_counter() if self.timing else 0.0
        x, info = solve(P, q, A, lower, upper, x0=self.forces.reshape(-1, 12), y0=self.duals, iterations=cfg.qp_iterations)
        if self.timing:
            self.solve_seconds += time.perf_counter() - start
        forces = x.reshape(-1, 4, 3) * stance[..., None]  # swing rows are equalities to 0: make it exact
        # in place: the warm start is carried between steps (a captured env step reads it there)
        self.forces.copy_(forces)
        self.duals.copy_(info.y)
        self.last_info = info
        return forces

    def reset(self, env_ids: torch.Tensor) -> None:
        selection.fill(self.forces, env_ids, 0.0)
        selection.fill(self.duals, env_ids, 0.0)

    def state_dict(self) -> dict[str, torch.Tensor]:
        return {"forces": self.forces.clone(), "duals": self.duals.clone()}

    def load_state_dict(self, state: dict[str, torch.Tensor]) -> None:
        self.forces.copy_(state["forces"])
        self.duals.copy_(state["duals"])
