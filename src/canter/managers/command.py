"""Command manager: goals the policy is asked to follow (e.g. a base velocity), resampled per env
after a random time, and on reset. A command term is a class with a config dataclass."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import torch

from canter.core.errors import ConfigError
from canter.core.math import wrap_to_pi, yaw_from_quat
from canter.managers.term import print_table

if TYPE_CHECKING:
    from rich.console import Console

    from canter.envs.manager_env import ManagerBasedRLEnv


@dataclass(kw_only=True)
class CommandTermCfg:
    resampling_time_range: tuple[float, float] = (10.0, 10.0)
    term_class: ClassVar[type[CommandTerm]]

    def __post_init__(self) -> None:
        low, high = self.resampling_time_range
        if not 0 < low <= high:
            raise ConfigError(
                f"commands.resampling_time_range: need 0 < low <= high, got {self.resampling_time_range}"
            )


class CommandTerm:
    """Holds `command` (num_envs, dim); subclasses implement `_resample(env_ids)` and `_update(dt)`."""

    def __init__(self, cfg: CommandTermCfg, env: ManagerBasedRLEnv):
        self.cfg = cfg
        self.env = env
        self.time_left = torch.zeros(env.num_envs, device=env.device)

    @property
    def command(self) -> torch.Tensor:
        raise NotImplementedError

    def _resample(self, env_ids: torch.Tensor) -> None:
        raise NotImplementedError

    def _update(self, dt: float) -> None:
        """Per-step update of the command (e.g. heading control); default: nothing."""

    def _uniform(self, bounds: tuple[float, float], count: int) -> torch.Tensor:
        u = torch.rand(count, generator=self.env.generator, device=self.env.device)
        return bounds[0] + (bounds[1] - bounds[0]) * u

    def resample(self, env_ids: torch.Tensor) -> None:
        if env_ids.numel() == 0:
            return
        self.time_left[env_ids] = self._uniform(self.cfg.resampling_time_range, env_ids.numel())
        self._resample(env_ids)

    def compute(self, dt: float) -> None:
        self.time_left -= dt
        self.resample((self.time_left <= 0.0).nonzero().squeeze(1))
        self._update(dt)

    def state_dict(self) -> dict[str, torch.Tensor]:
        return {"time_left": self.time_left.clone()}

    def load_state_dict(self, state: dict[str, torch.Tensor]) -> None:
        for key, value in state.items():
            getattr(self, key).copy_(value)


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
    term_class: ClassVar[type[CommandTerm]]


class UniformVelocityCommand(CommandTerm):
    cfg: UniformVelocityCommandCfg

    def __init__(self, cfg: UniformVelocityCommandCfg, env: ManagerBasedRLEnv):
        super().__init__(cfg, env)
        n = env.num_envs
        self.vel_command = torch.zeros(n, 3, device=env.device)
        self.heading_target = torch.zeros(n, device=env.device)
        self.is_heading_env = torch.zeros(n, dtype=torch.bool, device=env.device)
        self.is_standing_env = torch.zeros(n, dtype=torch.bool, device=env.device)

    @property
    def command(self) -> torch.Tensor:
        return self.vel_command

    def _resample(self, env_ids: torch.Tensor) -> None:
        cfg, count = self.cfg, env_ids.numel()
        # one draw for the six per-env numbers: the same stream as six draws of `count` in a row
        u = torch.rand(6, count, generator=self.env.generator, device=self.env.device)
        velocity = torch.stack(
            [low + (high - low) * u[k] for k, (low, high) in enumerate((cfg.lin_vel_x, cfg.lin_vel_y, cfg.ang_vel_z))],
            dim=1,
        )
        low, high = cfg.heading
        self.heading_target[env_ids] = low + (high - low) * u[3]
        self.is_heading_env[env_ids] = (u[4] < cfg.rel_heading_envs) & cfg.heading_command
        standing = u[5] < cfg.rel_standing_envs
        self.is_standing_env[env_ids] = standing
        self.vel_command[env_ids] = velocity.masked_fill_(standing[:, None], 0.0)

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
        }


UniformVelocityCommandCfg.term_class = UniformVelocityCommand


class CommandManager:
    def __init__(self, cfg: dict[str, CommandTermCfg], env: ManagerBasedRLEnv, console: Console | None):
        self.terms: dict[str, CommandTerm] = {name: term.term_class(term, env) for name, term in cfg.items()}
        rows = [(name, type(term).__name__) for name, term in self.terms.items()]
        print_table(console, "Active Command Terms", ("Name", "Type"), rows)

    def get_command(self, name: str) -> torch.Tensor:
        if name not in self.terms:
            raise ConfigError(f"command {name!r} does not exist (have: {', '.join(self.terms) or 'none'})")
        return self.terms[name].command

    def compute(self, dt: float) -> None:
        for term in self.terms.values():
            term.compute(dt)

    def reset(self, env_ids: torch.Tensor) -> None:
        for term in self.terms.values():
            term.resample(env_ids)

    def state_dict(self) -> dict[str, Any]:
        return {name: term.state_dict() for name, term in self.terms.items()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        for name, term in self.terms.items():
            term.load_state_dict(state[name])
