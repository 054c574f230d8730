"""Termination manager: `terminated` (a terminal state) is kept apart from `truncated` (time-outs)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch

from canter.core import selection
from canter.core.errors import ConfigError
from canter.managers.term import TermCfg, TermManager, print_table

if TYPE_CHECKING:
    from rich.console import Console

    from canter.envs.manager_env import ManagerBasedRLEnv


@dataclass(kw_only=True)
class TerminationTermCfg(TermCfg):
    time_out: bool = False  # True: the episode is cut short, not ended (the value is bootstrapped)


class TerminationManager(TermManager):
    def __init__(self, cfg: dict[str, TerminationTermCfg], env: ManagerBasedRLEnv, console: Console | None):
        if not any(term.time_out for term in cfg.values()):
            raise ConfigError("terminations: a task needs a time-out term (time_out=True) so episodes end")
        super().__init__("termination", env)
        self.names = list(cfg)
        self.time_out = [cfg[name].time_out for name in self.names]
        self._terms = [self._build(name, term) for name, term in cfg.items()]
        n = env.num_envs
        self.terminated = torch.zeros(n, dtype=torch.bool, device=env.device)
        self.truncated = torch.zeros(n, dtype=torch.bool, device=env.device)
        self.term_dones = torch.zeros(len(self.names), n, dtype=torch.bool, device=env.device)
        # the rows of term_dones that time out and those that end the episode: a slice where they are
        # contiguous (a view, no copy), else an index tensor on the device, made once (a Python list would
        # be copied to the device at every step)
        time_out_rows = [i for i, t in enumerate(self.time_out) if t]
        terminal_rows = [i for i, t in enumerate(self.time_out) if not t]
        self._time_out_rows = self._rows(time_out_rows, env.device)
        self._terminal_rows = self._rows(terminal_rows, env.device) if terminal_rows else None
        self._log_keys = [f"Episode_Termination/{name}" for name in self.names]
        print_table(
            console,
            "Active Termination Terms",
            ("Name", "Time Out"),
            list(zip(self.names, self.time_out, strict=True)),
        )

    @staticmethod
    def _rows(rows: list[int], device: torch.device | str) -> slice | torch.Tensor:
        return selection.as_slice(rows) or torch.tensor(rows, dtype=torch.long, device=device)

    def compute(self) -> tuple[torch.Tensor, torch.Tensor]:
        """(terminated, truncated), each (num_envs,) bool. An env both terminated and timed out
        counts as terminated (no bootstrap)."""
        torch.stack([func(self.env, **params) for func, params in self._terms], out=self.term_dones)
        torch.any(self.term_dones[self._time_out_rows], dim=0, out=self.truncated)
        if self._terminal_rows is None:
            self.terminated.zero_()
        else:
            torch.any(self.term_dones[self._terminal_rows], dim=0, out=self.terminated)
        # the episode length always bounds an episode, whatever the time-out term says
        self.truncated |= self.env.episode_length_buf >= self.env.max_episode_length
        self.truncated &= ~self.terminated
        return self.terminated, self.truncated

    def reset(self, env_ids: torch.Tensor) -> dict[str, torch.Tensor]:
        """Fraction of the resetting envs ended by each term; resets the stateful terms for them."""
        fractions = selection.mean(self.term_dones, env_ids, dim=1)
        self.reset_terms(env_ids)
        return dict(zip(self._log_keys, fractions.unbind(0), strict=True))

    def state_dict(self) -> dict[str, Any]:
        return {"terms": self.terms_state_dict()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.load_terms_state_dict(state["terms"])

