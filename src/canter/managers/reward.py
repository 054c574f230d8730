"""Reward manager: r = sum_i weight_i * term_i * dt, with per-term episode sums for logging."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch

from canter.core import selection
from canter.core.errors import ConfigError
from canter.core.validate import require_finite
from canter.managers.term import TermCfg, TermManager, print_table

if TYPE_CHECKING:
    from rich.console import Console

    from canter.envs.manager_env import ManagerBasedRLEnv


@dataclass(kw_only=True)
class RewardTermCfg(TermCfg):
    weight: float

    def validate(self) -> None:
        super().validate()
        require_finite(self, "weight")


class RewardManager(TermManager):
    def __init__(
        self,
        cfg: dict[str, RewardTermCfg],
        env: ManagerBasedRLEnv,
        console: Console | None,
        only_positive: bool = False,
    ):
        super().__init__("reward", env)
        self.only_positive = only_positive
        self.names = list(cfg)
        self.weights = {name: float(term.weight) for name, term in cfg.items()}
        self._terms: list[tuple[Any, dict[str, Any]]] = []
        for name, term_cfg in cfg.items():
            self._terms.append(self._build(name, term_cfg))
        n = env.num_envs
        self.reward = torch.zeros(n, device=env.device)
        self.episode_sums = torch.zeros(len(self.names), n, device=env.device)
        # the latest weighted per-step value of each term, (num_terms, num_envs)
        self.step_values = torch.zeros(len(self.names), n, device=env.device)
        self._log_keys = [f"Episode_Reward/{name}" for name in self.names]
        self._active = [self.weights[name] != 0.0 for name in self.names]
        self._all_active = bool(self._active) and all(self._active)
        self._scale_cache: tuple[float, torch.Tensor] | None = None
        print_table(
            console, "Active Reward Terms", ("Name", "Weight"), [(k, v) for k, v in self.weights.items()]
        )

    def compute(self, dt: float) -> torch.Tensor:
        """(num_envs,) float32 reward of this env step."""
        if self._all_active:  # one stacking copy (cast to float32) instead of a copy per term
            torch.stack([func(self.env, **params) for func, params in self._terms], out=self.step_values)
        else:
            for index, (func, params) in enumerate(self._terms):
                if self._active[index]:
                    self.step_values[index].copy_(func(self.env, **params))
        # step_values[i] = weight_i * term_i * dt; inactive (zero-weight) rows stay zero
        self.step_values.mul_(self._scale(dt))
        torch.nan_to_num_(self.step_values, nan=0.0, posinf=0.0, neginf=0.0)  # a broken env earns nothing
        torch.sum(self.step_values, dim=0, out=self.reward)
        if self.only_positive:
            self.reward.clamp_(min=0.0)
        self.episode_sums += self.step_values
        return self.reward

    def _scale(self, dt: float) -> torch.Tensor:
        if self._scale_cache is None or self._scale_cache[0] != dt:
            weights = torch.tensor([self.weights[name] * dt for name in self.names], device=self.env.device)
            self._scale_cache = (dt, weights[:, None])
        return self._scale_cache[1]

    def reset(self, env_ids: torch.Tensor) -> dict[str, torch.Tensor]:
        """Episode means per second of each term over the envs that reset; clears their sums."""
        means = selection.mean(self.episode_sums, env_ids, dim=1) / self.env.max_episode_length_s
        logs = dict(zip(self._log_keys, means.unbind(0), strict=True))
        selection.fill(self.episode_sums, env_ids, 0.0, dim=1)
        self.reset_terms(env_ids)
        return logs

    def set_weight(self, name: str, weight: float) -> None:
        if name not in self.weights:
            raise ConfigError(f"reward term {name!r} does not exist (have: {', '.join(self.names)})")
        if not math.isfinite(weight):
            raise ConfigError(f"rewards.{name}.weight: must be finite, got {weight}")
        self.weights[name] = float(weight)
        self._active = [self.weights[n] != 0.0 for n in self.names]
        self._all_active = bool(self._active) and all(self._active)
        self._scale_cache = None

    def state_dict(self) -> dict[str, Any]:
        return {
            "episode_sums": self.episode_sums.clone(),
            "weights": dict(self.weights),
            "terms": self.terms_state_dict(),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.episode_sums.copy_(state["episode_sums"])
        self.weights.update(state["weights"])
        self._active = [self.weights[n] != 0.0 for n in self.names]
        self._all_active = bool(self._active) and all(self._active)
        self._scale_cache = None
        self.load_terms_state_dict(state["terms"])
