"""Observation manager: named groups of terms, each term computed -> noise -> clip -> scale -> history.

A group is returned as one (num_envs, dim) float32 tensor, terms concatenated in config order.
History (if any) is flattened oldest-first per term; after a reset it is filled with the first value.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import torch

from canter.core.errors import ConfigError
from canter.core.validate import (
    Validated,
    fail,
    require_at_least,
    require_choice,
    require_finite,
    require_pair,
)
from canter.managers.term import TermCfg, TermManager, build_term, print_table

if TYPE_CHECKING:
    from rich.console import Console

    from canter.envs.manager_env import ManagerBasedRLEnv


@dataclass(kw_only=True)
class NoiseCfg(Validated):
    """Additive noise: uniform in [low, high], or gaussian with std (and zero mean)."""

    kind: Literal["uniform", "gaussian"] = "uniform"
    low: float = 0.0
    high: float = 0.0
    std: float = 0.0

    def validate(self) -> None:
        require_choice(self, "kind")
        require_finite(self, "low", "high")
        if not self.low <= self.high:
            raise fail("high", f"must be >= low ({self.low}), got {self.high}")
        require_at_least(self, "std", 0.0)


def unoise(magnitude: float) -> NoiseCfg:
    return NoiseCfg(kind="uniform", low=-magnitude, high=magnitude)


def gnoise(std: float) -> NoiseCfg:
    return NoiseCfg(kind="gaussian", std=std)


@dataclass(kw_only=True)
class ObsTermCfg(TermCfg):
    noise: NoiseCfg | None = None
    clip: tuple[float, float] | None = None
    scale: float | None = None
    history_length: int = 0

    def validate(self) -> None:
        super().validate()
        if self.clip is not None:
            require_pair(self, "clip", strict=True)
        if self.scale is not None:
            require_finite(self, "scale")
        require_at_least(self, "history_length", 0, integer=True)


@dataclass(kw_only=True)
class ObsGroupCfg:
    terms: dict[str, ObsTermCfg] = field(default_factory=dict)
    enable_corruption: bool = True  # apply the terms' noise (off for privileged critic groups)


class _Term:
    def __init__(self, name: str, cfg: ObsTermCfg, func: Any, params: dict[str, Any], dim: int):
        self.name = name
        self.cfg = cfg
        self.func = func
        self.params = params
        self.dim = dim
        self.history: torch.Tensor | None = None
        self.noise: torch.Tensor | None = None  # (num_envs, dim) float32 buffer the noise is drawn into


class ObservationManager(TermManager):
    """Stateful terms are tracked as "<group>/<term>" (a term may appear in several groups)."""

    def __init__(self, cfg: dict[str, ObsGroupCfg], env: ManagerBasedRLEnv, console: Console | None):
        if "policy" not in cfg:
            raise ConfigError("observations: a task needs a 'policy' observation group")
        super().__init__("observation", env)
        self.cfg = cfg
        self.groups: dict[str, list[_Term]] = {}
        self.group_dims: dict[str, int] = {}
        self._fresh = torch.ones(env.num_envs, dtype=torch.bool, device=env.device)
        for group_name, group in cfg.items():
            terms: list[_Term] = []
            for name, term_cfg in group.terms.items():
                func, params = build_term(f"observation[{group_name}]", name, term_cfg, env)
                self._track(f"{group_name}/{name}", func)
                value = func(env, **params)
                if value.ndim != 2 or value.shape[0] != env.num_envs:
                    raise ConfigError(
                        f"observation term {name!r}: must return (num_envs, dim), got {tuple(value.shape)}"
                    )
                term = _Term(name, term_cfg, func, params, int(value.shape[1]))
                if term_cfg.noise is not None:
                    term.noise = torch.empty(env.num_envs, term.dim, device=env.device)
                if term_cfg.history_length > 0:
                    term.history = torch.zeros(
                        env.num_envs, term_cfg.history_length, term.dim, device=env.device
                    )
                terms.append(term)
            self.groups[group_name] = terms
            self.group_dims[group_name] = sum(t.dim * max(1, t.cfg.history_length) for t in terms)
            rows = [
                (t.name, (t.dim * max(1, t.cfg.history_length),), _describe_noise(t.cfg.noise)) for t in terms
            ]
            print_table(
                console,
                f"Active Observation Terms in Group: '{group_name}' (shape: ({self.group_dims[group_name]},))",
                ("Name", "Shape", "Noise"),
                rows,
            )

    def compute(self) -> dict[str, torch.Tensor]:
        """All groups, each (num_envs, dim) float32."""
        out = {name: self._compute_group(name, terms) for name, terms in self.groups.items()}
        self._fresh.zero_()
        return out

    def _compute_group(self, group_name: str, terms: list[_Term]) -> torch.Tensor:
        """Each term is written (and cast to float32) straight into its columns of a new output
        tensor, then processed in place there: one copy per term, no concatenation."""
        corrupt = self.cfg[group_name].enable_corruption
        out = torch.empty(self.env.num_envs, self.group_dims[group_name], device=self.env.device)
        start = 0
        for term in terms:
            value = term.func(self.env, **term.params)
            columns = out[:, start : start + term.dim]
            columns.copy_(value)
            if corrupt and term.noise is not None and term.cfg.noise is not None:
                columns += self._noise(term.cfg.noise, term.noise)
            if term.cfg.clip is not None:
                columns.clamp_(term.cfg.clip[0], term.cfg.clip[1])
            if term.cfg.scale is not None:
                columns.mul_(term.cfg.scale)
            if term.history is not None:
                # newest last; rows that just reset see their first value in every slot
                rolled = torch.cat((term.history[:, 1:], columns.unsqueeze(1)), dim=1)
                filled = columns.unsqueeze(1).expand_as(term.history)
                term.history.copy_(torch.where(self._fresh[:, None, None], filled, rolled))
                out[:, start : start + term.dim * term.cfg.history_length] = term.history.flatten(1)
                start += term.dim * term.cfg.history_length
            else:
                start += term.dim
        return out

    def _noise(self, noise: NoiseCfg, out: torch.Tensor) -> torch.Tensor:
        """Noise drawn into the term's buffer `out`: std * N(0, 1) or low + (high - low) * U(0, 1)."""
        generator = self.env.generator
        if noise.kind == "gaussian":
            return torch.randn(out.shape, generator=generator, out=out).mul_(noise.std)
        return torch.rand(out.shape, generator=generator, out=out).mul_(noise.high - noise.low).add_(noise.low)

    def reset(self, env_ids: torch.Tensor) -> None:
        self._fresh[env_ids] = True
        self.reset_terms(env_ids)

    def state_dict(self) -> dict[str, Any]:
        state: dict[str, Any] = {"fresh": self._fresh.clone(), "terms": self.terms_state_dict()}
        for group, terms in self.groups.items():
            for term in terms:
                if term.history is not None:
                    state[f"{group}/{term.name}/history"] = term.history.clone()
        return state

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self._fresh.copy_(state["fresh"])
        self.load_terms_state_dict(state["terms"])
        for group, terms in self.groups.items():
            for term in terms:
                if term.history is not None:
                    term.history.copy_(state[f"{group}/{term.name}/history"])


def _describe_noise(noise: NoiseCfg | None) -> str:
    if noise is None:
        return "-"
    if noise.kind == "gaussian":
        return f"N(0, {noise.std}²)"
    return f"U({noise.low}, {noise.high})"
