"""Command terms: base velocity goals, resampled at random times (`UniformVelocityCommand`) or held
fixed (`ConstantVelocityCommand`, e.g. for a controller that walks at one speed)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch

from canter.core import selection
from canter.core.math import wrap_to_pi, yaw_from_quat
from canter.core.validate import fail, require_finite, require_in_range, require_pair
from canter.managers.command import CommandTerm, CommandTermCfg

if TYPE_CHECKING:
    from canter.envs.manager_env import ManagerBasedRLEnv


@dataclass(kw_only=True)
class UniformVelocityCommandCfg(CommandTermCfg):
    """Base velocity commands (vx, vy, wz) in the body/heading frame, m/s and rad/s.

    heading_command: sample a target heading and derive wz = stiffness * heading error (clipped to
        the wz range) for `rel_heading_envs` of the envs; the rest get wz sampled directly.
    rel_standing_envs: fraction of envs commanded to stand still.
    """

    lin_vel_x: tuple[float, float] = (-1.0, 1.0)
    lin_vel_y: tuple[float, float] = (-1.0, 1.0)
    ang_vel_z: tuple[float, float] = (-1.0, 1.0)
    heading: tuple[float, float] = (-math.pi, math.pi)
    heading_command: bool = False
    heading_control_stiffness: float = 0.5
    rel_heading_envs: float = 1.0
    rel_standing_envs: float = 0.0

    def validate(self) -> None:
        super().validate()
        for name in ("lin_vel_x", "lin_vel_y", "ang_vel_z", "heading"):
            require_pair(self, name)
        require_finite(self, "heading_control_stiffness")
        require_in_range(self, "rel_heading_envs", 0.0, 1.0)
        require_in_range(self, "rel_standing_envs", 0.0, 1.0)

    def build(self, env: ManagerBasedRLEnv) -> UniformVelocityCommand:
        return UniformVelocityCommand(self, env)


class UniformVelocityCommand(CommandTerm):
    cfg: UniformVelocityCommandCfg

    def __init__(self, cfg: UniformVelocityCommandCfg, env: ManagerBasedRLEnv):
        super().__init__(cfg, env)
        n = env.num_envs
        self.vel_command = torch.zeros(n, 3, device=env.device)
        self.heading_target = torch.zeros(n, device=env.device)
        self.is_heading_env = torch.zeros(n, dtype=torch.bool, device=env.device)
        self.is_standing_env = torch.zeros(n, dtype=torch.bool, device=env.device)
        # the forward-speed range on the device, so that a curriculum can widen it without a host read;
        # float64 like the Python numbers of the other ranges, so the draws are the same as from those
        self.lin_vel_x_range = torch.tensor(cfg.lin_vel_x, dtype=torch.float64, device=env.device)

    @property
    def command(self) -> torch.Tensor:
        return self.vel_command

    def _resample(self, env_ids: torch.Tensor) -> None:
        cfg, count = self.cfg, selection.rows(env_ids)
        # one draw for the six per-env numbers: the same stream as six draws of `count` in a row
        u = torch.rand(6, count, generator=self.env.generator, device=self.env.device)
        x_low, x_high = self.lin_vel_x_range.unbind(0)
        velocity = torch.stack(
            [x_low + (x_high - x_low) * u[0]]
            + [low + (high - low) * u[k] for k, (low, high) in enumerate((cfg.lin_vel_y, cfg.ang_vel_z), start=1)],
            dim=1,
        )
        low, high = cfg.heading
        selection.put(self.heading_target, env_ids, low + (high - low) * u[3])
        selection.put(self.is_heading_env, env_ids, (u[4] < cfg.rel_heading_envs) & cfg.heading_command)
        standing = u[5] < cfg.rel_standing_envs
        selection.put(self.is_standing_env, env_ids, standing)
        selection.put(self.vel_command, env_ids, velocity.masked_fill_(standing[:, None], 0.0))

    def _update(self, dt: float) -> None:
        if self.cfg.heading_command:
            error = wrap_to_pi(self.heading_target - yaw_from_quat(self.env.scene.root_quat_w).float())
            wz = (self.cfg.heading_control_stiffness * error).clamp(*self.cfg.ang_vel_z)
            self.vel_command[:, 2] = torch.where(self.is_heading_env, wz, self.vel_command[:, 2])
        self.vel_command.masked_fill_(self.is_standing_env[:, None], 0.0)

    def state_dict(self) -> dict[str, torch.Tensor]:
        return {
            "time_left": self.time_left.clone(),
            "vel_command": self.vel_command.clone(),
            "heading_target": self.heading_target.clone(),
            "is_heading_env": self.is_heading_env.clone(),
            "is_standing_env": self.is_standing_env.clone(),
            "lin_vel_x_range": self.lin_vel_x_range.clone(),
        }


@dataclass(kw_only=True)
class ConstantVelocityCommandCfg(CommandTermCfg):
    """One base velocity (vx, vy, wz) for every env, m/s and rad/s; never resampled (draws nothing)."""

    velocity: tuple[float, float, float] = (0.5, 0.0, 0.0)

    def validate(self) -> None:
        super().validate()
        if len(self.velocity) != 3 or not all(math.isfinite(v) for v in self.velocity):
            raise fail("velocity", f"need three finite numbers (vx, vy, wz), got {self.velocity}")

    def build(self, env: ManagerBasedRLEnv) -> ConstantVelocityCommand:
        return ConstantVelocityCommand(self, env)


class ConstantVelocityCommand(CommandTerm):
    cfg: ConstantVelocityCommandCfg

    def __init__(self, cfg: ConstantVelocityCommandCfg, env: ManagerBasedRLEnv):
        super().__init__(cfg, env)
        self.vel_command = torch.tensor(cfg.velocity, device=env.device).expand(env.num_envs, 3).clone()

    @property
    def command(self) -> torch.Tensor:
        return self.vel_command

    def resample(self, env_ids: torch.Tensor) -> None:
        """Nothing to draw: the command is fixed."""

    def compute(self, dt: float) -> None:
        """Nothing changes between steps."""

    def state_dict(self) -> dict[str, torch.Tensor]:
        return {}
