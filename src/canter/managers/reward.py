"""Reward manager: r = sum_i weight_i * term_i * dt, with per-term episode sums for logging."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch

from canter.core.errors import ConfigError
from canter.managers.term import ManagerTerm, TermCfg, build_term, print_table

if TYPE_CHECKING:
    from rich.console import Console

    from canter.envs.manager_env import ManagerBasedRLEnv


@dataclass(kw_only=True)
class RewardTermCfg(TermCfg):
    weight: float


class RewardManager:
    def __init__(self, cfg: dict[str, RewardTermCfg], env: ManagerBasedRLEnv, console: Console | None):
        self.env = env
        self.names = list(cfg)
        self.weights = {name: float(term.weight) for name, term in cfg.items()}
        self._terms: list[tuple[Any, dict[str, Any]]] = []
        for name, term_cfg in cfg.items():
            if not isinstance(term_cfg.weight, (int, float)):
                raise ConfigError(f"reward term {name!r}: weight must be a number, got {term_cfg.weight!r}")
            self._terms.append(build_term("reward", name, term_cfg, env))
        n = env.num_envs
        self.reward = torch.zeros(n, device=env.device)
        self.episode_sums = torch.zeros(len(self.names), n, device=env.device)
        # the latest weighted per-step value of each term, (num_terms, num_envs)
        self.step_values = torch.zeros(len(self.names), n, device=env.device)
        print_table(
            console, "Active Reward Terms", ("Name", "Weight"), [(k, v) for k, v in self.weights.items()]
        )

    def compute(self, dt: float) -> torch.Tensor:
        """(num_envs,) float32 reward of this env step."""
        for index, (name, (func, params)) in enumerate(zip(self.names, self._terms, strict=True)):
            weight = self.weights[name]
            if weight == 0.0:
                self.step_values[index].zero_()
                continue
            self.step_values[index] = func(self.env, **params).to(torch.float32) * (weight * dt)
        torch.sum(self.step_values, dim=0, out=self.reward)
        self.episode_sums += self.step_values
        return self.reward

    def reset(self, env_ids: torch.Tensor) -> dict[str, torch.Tensor]:
        """Episode means per second of each term over the envs that reset; clears their sums."""
        seconds = self.env.max_episode_length_s
        sums = self.episode_sums[:, env_ids]
        logs = {f"Episode_Reward/{name}": sums[i].mean() / seconds for i, name in enumerate(self.names)}
        self.episode_sums[:, env_ids] = 0.0
        for func, _ in self._terms:
            if isinstance(func, ManagerTerm):
                func.reset(env_ids)
        return logs

    def set_weight(self, name: str, weight: float) -> None:
        if name not in self.weights:
            raise ConfigError(f"reward term {name!r} does not exist (have: {', '.join(self.names)})")
        self.weights[name] = float(weight)

    def state_dict(self) -> dict[str, Any]:
        state: dict[str, Any] = {"episode_sums": self.episode_sums.clone(), "weights": dict(self.weights)}
        for name, (func, _) in zip(self.names, self._terms, strict=True):
            if isinstance(func, ManagerTerm):
                state[f"term/{name}"] = {k: v.clone() for k, v in func.state_dict().items()}
        return state

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.episode_sums.copy_(state["episode_sums"])
        self.weights.update(state["weights"])
        for name, (func, _) in zip(self.names, self._terms, strict=True):
            if isinstance(func, ManagerTerm):
                func.load_state_dict(state[f"term/{name}"])
