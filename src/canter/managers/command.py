"""Command manager: goals the policy is asked to follow (e.g. a base velocity), resampled per env
after a random time, and on reset. A command term is a `CommandTerm` subclass built by its config's
`build(env)`; the terms themselves live in canter.mdp.commands."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch

from canter.core import selection
from canter.core.errors import ConfigError
from canter.core.validate import Validated, fail, require_pair
from canter.managers.term import Stateful, TermManager, print_table

if TYPE_CHECKING:
    from rich.console import Console

    from canter.envs.manager_env import ManagerBasedRLEnv


@dataclass(kw_only=True)
class CommandTermCfg(Validated):
    """resampling_time_range: (low, high) seconds between two draws of an env's command."""

    resampling_time_range: tuple[float, float] = (10.0, 10.0)

    def validate(self) -> None:
        require_pair(self, "resampling_time_range")
        if not self.resampling_time_range[0] > 0:
            raise fail("resampling_time_range", f"need 0 < low <= high, got {self.resampling_time_range}")

    def build(self, env: ManagerBasedRLEnv) -> CommandTerm:
        """The term this config describes."""
        raise NotImplementedError(f"{type(self).__name__}.build")

    def evaluation(self) -> CommandTermCfg:
        """The config to score a policy with: training-only aids off (e.g. a curriculum's easy
        commands give way to the full set); default: this config."""
        return self


class CommandTerm(Stateful):
    """Holds `command` (num_envs, dim); subclasses implement `_resample(env_ids)` (a selection: draw
    `selection.rows(env_ids)` values, write with `selection.put`) and `_update(dt)`, and list their
    per-env tensors in `state_dict`. `reset(env_ids)` draws new commands."""

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

    def resample(self, env_ids: torch.Tensor) -> None:
        """New commands and resampling times for the selection `env_ids` (indices or a mask, see
        canter.core.selection), drawn from the env's generator."""
        if not selection.is_mask(env_ids) and env_ids.numel() == 0:
            return
        low, high = self.cfg.resampling_time_range
        u = torch.rand(selection.rows(env_ids), generator=self.env.generator, device=self.env.device)
        selection.put(self.time_left, env_ids, low + (high - low) * u)
        self._resample(env_ids)

    def compute(self, dt: float) -> None:
        self.time_left -= dt
        self.resample(self.env.select(self.time_left <= 0.0))
        self._update(dt)

    def reset(self, env_ids: torch.Tensor) -> None:
        self.resample(env_ids)

    def evaluation(self) -> None:
        """From here on, commands as `cfg.evaluation()` would draw them; default: nothing changes."""

    def state_dict(self) -> dict[str, torch.Tensor]:
        return {"time_left": self.time_left.clone()}


class CommandManager(TermManager):
    def __init__(self, cfg: dict[str, CommandTermCfg], env: ManagerBasedRLEnv, console: Console | None):
        super().__init__("commands", env)
        self.terms: dict[str, CommandTerm] = {name: term.build(env) for name, term in cfg.items()}
        for name, term in self.terms.items():
            self._track(name, term)
        rows = [(name, type(term).__name__) for name, term in self.terms.items()]
        print_table(console, "Active Command Terms", ("Name", "Type"), rows)

    def term(self, name: str) -> CommandTerm:
        """The command term called `name`."""
        if name not in self.terms:
            raise ConfigError(f"command {name!r} does not exist (have: {', '.join(self.terms) or 'none'})")
        return self.terms[name]

    def get_command(self, name: str) -> torch.Tensor:
        """(num_envs, dim) the current command of term `name`."""
        return self.term(name).command

    def compute(self, dt: float) -> None:
        for term in self.terms.values():
            term.compute(dt)

    def reset(self, env_ids: torch.Tensor) -> None:
        self.reset_terms(env_ids)

    def state_dict(self) -> dict[str, Any]:
        return {"terms": self.terms_state_dict()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.load_terms_state_dict(state["terms"])
