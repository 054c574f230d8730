"""Curriculum manager: terms `func(env, env_ids, **params)` run at each reset, before the envs' new
episode starts; the value a term returns (a tensor or number) is logged as Curriculum/<name>."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch

from canter.managers.term import ManagerTerm, TermCfg, build_term, print_table

if TYPE_CHECKING:
    from rich.console import Console

    from canter.envs.manager_env import ManagerBasedRLEnv


@dataclass(kw_only=True)
class CurriculumTermCfg(TermCfg):
    pass


class CurriculumManager:
    def __init__(self, cfg: dict[str, CurriculumTermCfg], env: ManagerBasedRLEnv, console: Console | None):
        self.env = env
        self.terms = {
            name: build_term("curriculum", name, term, env, leading=2) for name, term in cfg.items()
        }
        self.state: dict[str, torch.Tensor] = {}
        print_table(console, "Active Curriculum Terms", ("Name",), [(name,) for name in self.terms])

    def compute(self, env_ids: torch.Tensor) -> dict[str, torch.Tensor]:
        for name, (func, params) in self.terms.items():
            value = func(self.env, env_ids, **params)
            if value is not None:
                self.state[name] = torch.as_tensor(value, device=self.env.device, dtype=torch.float32)
        return {f"Curriculum/{name}": value for name, value in self.state.items()}

    def state_dict(self) -> dict[str, Any]:
        state: dict[str, Any] = {"values": {k: v.clone() for k, v in self.state.items()}}
        for name, (func, _) in self.terms.items():
            if isinstance(func, ManagerTerm):
                state[f"term/{name}"] = {k: v.clone() for k, v in func.state_dict().items()}
        return state

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.state = {k: v.clone() for k, v in state["values"].items()}
        for name, (func, _) in self.terms.items():
            if isinstance(func, ManagerTerm):
                func.load_state_dict(state[f"term/{name}"])
