"""Curriculum manager: terms `func(env, env_ids, **params)` run at each reset, before the envs' new
episode starts (`reset(env_ids)`); the value a term returns (a tensor or number) is logged as
Curriculum/<name>. Stateful terms are reset for those envs after they ran.

A term whose func is marked `training_only = True` (a class attribute, e.g. the hand's
RandomizationCurriculum) eases training only: `EnvCfg.evaluation()` leaves it out, and a built env's
`evaluation()` calls the term's own `evaluation()`, so a policy is scored on the task itself."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch

from canter.managers.term import TermCfg, TermManager, print_table

if TYPE_CHECKING:
    from rich.console import Console

    from canter.envs.manager_env import ManagerBasedRLEnv


@dataclass(kw_only=True)
class CurriculumTermCfg(TermCfg):
    pass


class CurriculumManager(TermManager):
    def __init__(self, cfg: dict[str, CurriculumTermCfg], env: ManagerBasedRLEnv, console: Console | None):
        super().__init__("curriculum", env)
        self.terms = {name: self._build(name, term, leading=2) for name, term in cfg.items()}
        self.state: dict[str, torch.Tensor] = {}
        print_table(console, "Active Curriculum Terms", ("Name",), [(name,) for name in self.terms])

    def reset(self, env_ids: torch.Tensor) -> dict[str, torch.Tensor]:
        """Run every term on the envs about to reset, then reset the stateful terms for them;
        returns the latest value of every term, as Curriculum/<name>."""
        for name, (func, params) in self.terms.items():
            value = func(self.env, env_ids, **params)
            if value is not None:
                self.state[name] = torch.as_tensor(value, device=self.env.device, dtype=torch.float32)
        self.reset_terms(env_ids)
        return {f"Curriculum/{name}": value for name, value in self.state.items()}

    def evaluation(self) -> None:
        """Score from here on: every term that has an `evaluation()` (a training-only aid) turns itself off."""
        for func, _ in self.terms.values():
            hook = getattr(func, "evaluation", None)
            if callable(hook):
                hook()

    def state_dict(self) -> dict[str, Any]:
        return {"values": {k: v.clone() for k, v in self.state.items()}, "terms": self.terms_state_dict()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.state = {k: v.clone() for k, v in state["values"].items()}
        self.load_terms_state_dict(state["terms"])
