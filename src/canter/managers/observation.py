"""Observation manager: named groups of terms, each term computed -> noise -> clip -> scale -> history.

A vector group is returned as one (num_envs, dim) float32 tensor, terms concatenated in config order.
History (if any) is flattened oldest-first per term; after a reset it is filled with the first value.

An image group holds one term that returns (num_envs, C, H, W) (a camera, canter.sensors.terms) and
is returned as it comes, (num_envs, C', H, W), in the term's dtype: uint8 RGB stays uint8 (noise is
added in float and the result rounded and clamped back to 0..255; a scale makes it float32), and a
history stacks frames along the channels, oldest first (C' = C · history_length), as Atari agents
stack frames.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import torch

from canter.core import selection
from canter.core.errors import ConfigError
from canter.core.validate import (
    Validated,
    fail,
    require_at_least,
    require_choice,
    require_finite,
    require_pair,
)
from canter.managers.symmetry import MirrorCfg
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
    mirror: MirrorCfg | None = None  # how the term maps under the robot's left-right mirror (symmetry)

    def validate(self) -> None:
        super().validate()
        if self.mirror is not None:
            self.mirror.validate()
        if self.clip is not None:
            require_pair(self, "clip", strict=True)
        if self.scale is not None:
            require_finite(self, "scale")
        require_at_least(self, "history_length", 0, integer=True)


@dataclass(kw_only=True)
class ObsGroupCfg:
    terms: dict[str, ObsTermCfg] = field(default_factory=dict)
    enable_corruption: bool = True  # apply the terms' noise (off for privileged critic groups)
    # bound of every value of a vector group, after its term's noise, clip and scale (legged_gym's
    # clip_observations): one env whose physics ran away cannot feed the networks numbers in the
    # millions. None: no bound. Image groups ignore it (their terms' own clip applies).
    clip: float | None = None


class _Term:
    def __init__(self, name: str, cfg: ObsTermCfg, func: Any, params: dict[str, Any], shape: tuple[int, ...],
                 dtype: torch.dtype):
        self.name = name
        self.cfg = cfg
        self.func = func
        self.params = params
        self.shape = shape  # per env: (dim,) or (C, H, W)
        self.dim = shape[0]
        self.dtype = dtype  # what the term returns
        self.history: torch.Tensor | None = None
        self.noise: torch.Tensor | None = None  # an image's (num_envs, C, H, W) float32 noise buffer

    @property
    def is_image(self) -> bool:
        return len(self.shape) == 3

    @property
    def output_dtype(self) -> torch.dtype:
        """uint8 images stay uint8 unless scaled; everything else leaves as float32."""
        keep = self.is_image and self.dtype == torch.uint8 and self.cfg.scale is None
        return torch.uint8 if keep else torch.float32


class _GroupColumns:
    """A vector group's per-column processing, built once from its terms' configs: the terms' spans
    in the group's current values (each term's latest value, before any history), and per column
    the uniform noise's low and width, the gaussian noise's std, the clip bounds and the scale (None
    where no term of the group has one). Columns without a kind of noise get 0 of it; without a clip,
    ±inf; without a scale, 1, so each step processes the whole group in a few tensor operations."""

    def __init__(self, terms: list[_Term], num_envs: int, device: torch.device | str):
        self.spans: list[tuple[int, int]] = []
        start = 0
        for term in terms:
            self.spans.append((start, start + term.dim))
            start += term.dim
        self.width = start
        self.has_history = any(term.history is not None for term in terms)

        def per_column(values: list[float | None], default: float) -> torch.Tensor | None:
            """One float32 value per column (each term's repeated over its dim), None if all None."""
            if all(value is None for value in values):
                return None
            row = [default if value is None else value for term, value in zip(terms, values, strict=True) for _ in range(term.dim)]
            return torch.tensor(row, dtype=torch.float32, device=device)

        noises = [term.cfg.noise for term in terms]
        uniform = [noise if noise is not None and noise.kind == "uniform" else None for noise in noises]
        gaussian = [noise if noise is not None and noise.kind == "gaussian" else None for noise in noises]
        low = per_column([None if noise is None else noise.low for noise in uniform], 0.0)
        width = per_column([None if noise is None else noise.high - noise.low for noise in uniform], 0.0)
        self.uniform = None if low is None or width is None else (low, width)
        self.gaussian = per_column([None if noise is None else noise.std for noise in gaussian], 0.0)
        # (num_envs, width) float32, the noise is drawn into it
        noisy = self.uniform is not None or self.gaussian is not None
        self.buffer = torch.empty(num_envs, self.width, device=device) if noisy else None
        clip_low = per_column([None if term.cfg.clip is None else term.cfg.clip[0] for term in terms], -math.inf)
        clip_high = per_column([None if term.cfg.clip is None else term.cfg.clip[1] for term in terms], math.inf)
        self.clip = None if clip_low is None or clip_high is None else (clip_low, clip_high)
        self.scale = per_column([term.cfg.scale for term in terms], 1.0)

    def add_noise(self, values: torch.Tensor, generator: torch.Generator) -> None:
        """values = values + width * U(0, 1) + low (one draw over the whole group, a fused multiply-add
        then an add), then values + std * N(0, 1) (a second draw, where a term has gaussian noise)."""
        if self.uniform is not None:
            assert self.buffer is not None
            low, width = self.uniform
            torch.rand(self.buffer.shape, generator=generator, out=self.buffer)
            values.addcmul_(self.buffer, width).add_(low)
        if self.gaussian is not None:
            assert self.buffer is not None
            torch.randn(self.buffer.shape, generator=generator, out=self.buffer)
            values.addcmul_(self.buffer, self.gaussian)


class ObservationManager(TermManager):
    """Stateful terms are tracked as "<group>/<term>" (a term may appear in several groups)."""

    def __init__(self, cfg: dict[str, ObsGroupCfg], env: ManagerBasedRLEnv, console: Console | None):
        if "policy" not in cfg:
            raise ConfigError("observations: a task needs a 'policy' observation group")
        super().__init__("observation", env)
        self.cfg = cfg
        self.groups: dict[str, list[_Term]] = {}
        self.group_shapes: dict[str, tuple[int, ...]] = {}
        self.group_dtypes: dict[str, torch.dtype] = {}
        self._columns: dict[str, _GroupColumns] = {}
        self._fresh = torch.ones(env.num_envs, dtype=torch.bool, device=env.device)
        for group_name, group in cfg.items():
            if group.clip is not None and not group.clip > 0:
                raise ConfigError(f"observation group {group_name!r}: clip must be > 0 (a bound, ±clip), got {group.clip}")
            terms: list[_Term] = []
            for name, term_cfg in group.terms.items():
                func, params = build_term(f"observation[{group_name}]", name, term_cfg, env)
                self._track(f"{group_name}/{name}", func)
                value = func(env, **params)
                if value.ndim not in (2, 4) or value.shape[0] != env.num_envs:
                    raise ConfigError(f"observation term {name!r}: must return (num_envs, dim) or an image "
                                      f"(num_envs, C, H, W), got {tuple(value.shape)}")
                term = _Term(name, term_cfg, func, params, tuple(int(d) for d in value.shape[1:]), value.dtype)
                if term_cfg.noise is not None and term.is_image:  # vector groups draw per group
                    term.noise = torch.empty(env.num_envs, *term.shape, device=env.device)
                if term_cfg.history_length > 0:
                    term.history = torch.zeros(env.num_envs, term_cfg.history_length, *term.shape,
                                               device=env.device, dtype=term.output_dtype)
                terms.append(term)
            if any(t.is_image for t in terms) and len(terms) != 1:
                raise ConfigError(f"observation group {group_name!r}: an image term must be alone in its group "
                                  f"(terms: {', '.join(t.name for t in terms)})")
            self.groups[group_name] = terms
            if not (terms and terms[0].is_image):
                self._columns[group_name] = _GroupColumns(terms, env.num_envs, env.device)
            self.group_shapes[group_name] = self._group_shape(terms)
            self.group_dtypes[group_name] = terms[0].output_dtype if terms else torch.float32
            rows = [(t.name, self._group_shape([t]), _describe_noise(t.cfg.noise)) for t in terms]
            print_table(
                console,
                f"Active Observation Terms in Group: '{group_name}' (shape: {self.group_shapes[group_name]})",
                ("Name", "Shape", "Noise"),
                rows,
            )

    @staticmethod
    def _group_shape(terms: list[_Term]) -> tuple[int, ...]:
        """(dim,) of a vector group; (C · frames, H, W) of an image group."""
        if terms and terms[0].is_image:
            channels, height, width = terms[0].shape
            return (channels * max(1, terms[0].cfg.history_length), height, width)
        return (sum(t.dim * max(1, t.cfg.history_length) for t in terms),)

    @property
    def group_dims(self) -> dict[str, int]:
        """Width of each vector group (the channels of an image group)."""
        return {name: shape[0] for name, shape in self.group_shapes.items()}

    def compute(self) -> dict[str, torch.Tensor]:
        """All groups: vector groups (num_envs, dim) float32, image groups (num_envs, C, H, W)."""
        out = {name: self._compute_group(name, terms) for name, terms in self.groups.items()}
        self._fresh.zero_()
        return out

    def _compute_group(self, group_name: str, terms: list[_Term]) -> torch.Tensor:
        """Each term is written (and cast to float32) into its columns of the group's current values,
        which are then processed as a whole: one draw of each noise kind, one clamp for the terms'
        clips, one product for their scales, one clamp for the group's bound. Terms with a history
        then push those values into it; the output is a new tensor (the current values themselves
        when no term keeps a history)."""
        group = self.cfg[group_name]
        if terms and terms[0].is_image:
            return self._compute_image(terms[0], group.enable_corruption)
        columns = self._columns[group_name]
        current = torch.empty(self.env.num_envs, columns.width, device=self.env.device)
        for term, (start, stop) in zip(terms, columns.spans, strict=True):
            current[:, start:stop].copy_(term.func(self.env, **term.params))
        if group.enable_corruption:
            columns.add_noise(current, self.env.generator)
        if columns.clip is not None:
            torch.clamp(current, columns.clip[0], columns.clip[1], out=current)
        if columns.scale is not None:
            current.mul_(columns.scale)
        if group.clip is not None:
            current.clamp_(-group.clip, group.clip)
        if not columns.has_history:
            return current
        out = torch.empty(self.env.num_envs, *self.group_shapes[group_name], device=self.env.device)
        start = 0
        for term, (first, stop) in zip(terms, columns.spans, strict=True):
            value = current[:, first:stop]
            if term.history is None:
                out[:, start : start + term.dim] = value
                start += term.dim
                continue
            # newest last; rows that just reset see their first value in every slot
            rolled = torch.cat((term.history[:, 1:], value.unsqueeze(1)), dim=1)
            filled = value.unsqueeze(1).expand_as(term.history)
            term.history.copy_(torch.where(self._fresh[:, None, None], filled, rolled))
            out[:, start : start + term.dim * term.cfg.history_length] = term.history.flatten(1)
            start += term.dim * term.cfg.history_length
        return out

    def _compute_image(self, term: _Term, corrupt: bool) -> torch.Tensor:
        """One image term: (num_envs, C, H, W) in the term's output dtype (see the module doc)."""
        value = term.func(self.env, **term.params)
        cfg = term.cfg
        noisy = corrupt and term.noise is not None and cfg.noise is not None
        if noisy or cfg.clip is not None or cfg.scale is not None:
            image = value.float()
            if noisy:
                assert term.noise is not None and cfg.noise is not None
                image += self._noise(cfg.noise, term.noise)
            if term.output_dtype == torch.uint8:
                image = image.round_().clamp_(0, 255)
            if cfg.clip is not None:
                image.clamp_(cfg.clip[0], cfg.clip[1])
            if cfg.scale is not None:
                image.mul_(cfg.scale)
            value = image.to(term.output_dtype)
        elif value.dtype != term.output_dtype:
            value = value.to(term.output_dtype)
        else:
            value = value.clone()  # the camera reuses its buffer: the observation must outlive the next render
        if term.history is None:
            return value
        rolled = torch.cat((term.history[:, 1:], value.unsqueeze(1)), dim=1)
        filled = value.unsqueeze(1).expand_as(term.history)
        term.history.copy_(torch.where(self._fresh[:, None, None, None, None], filled, rolled))
        return term.history.flatten(1, 2)

    def _noise(self, noise: NoiseCfg, out: torch.Tensor) -> torch.Tensor:
        """Noise drawn into the term's buffer `out`: std * N(0, 1) or low + (high - low) * U(0, 1)."""
        generator = self.env.generator
        if noise.kind == "gaussian":
            return torch.randn(out.shape, generator=generator, out=out).mul_(noise.std)
        return torch.rand(out.shape, generator=generator, out=out).mul_(noise.high - noise.low).add_(noise.low)

    def reset(self, env_ids: torch.Tensor) -> None:
        selection.fill(self._fresh, env_ids, True)
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
