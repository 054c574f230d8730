"""Action manager: maps the policy's (num_envs, action_dim) output to actuator controls.

The base classes of action terms live here; the terms themselves (joint actions, the quadruped
controller) in canter.mdp.actions and canter.mdp.controller_action."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch

from canter.core import selection
from canter.core.errors import ConfigError
from canter.core.validate import Validated, require_at_least, require_pair
from canter.managers.term import Stateful, TermManager, print_table

if TYPE_CHECKING:
    from rich.console import Console

    from canter.envs.manager_env import ManagerBasedRLEnv


@dataclass(kw_only=True)
class ActionTermCfg(Validated):
    """What every action term has; concrete terms (mdp.actions, mdp.controller_action) subclass it.

    clip: (low, high) the term's slice of the action is clamped to before use (None: no clamp).
    max_delay_steps: the longest actuator latency, in control steps, this term can be given
        (per env, e.g. by mdp.randomize_action_delay); delays beyond it are clamped to it. 0: never
        delayed.
    """

    clip: tuple[float, float] | None = None
    max_delay_steps: int = 0

    def validate(self) -> None:
        if self.clip is not None:
            require_pair(self, "clip", strict=True)
        require_at_least(self, "max_delay_steps", 0, integer=True)

    def build(self, name: str, env: ManagerBasedRLEnv) -> ActionTerm:
        """The term this config describes."""
        raise NotImplementedError(f"{type(self).__name__}.build")


class ActionTerm(Stateful):
    """One slice of the action vector, written into the actuator controls by `apply`.

    Subclasses set `action_dim` in their constructor and implement `apply`. A controller term sets
    `physics_steps_per_tick`: the env then calls `apply` every that many physics steps (the
    controller rate) with the same action, instead of once per env step. Terms that keep per-env
    state override the `Stateful` methods; the action manager resets and saves them.
    """

    physics_steps_per_tick: int | None = None
    action_dim: int

    def __init__(self, name: str, cfg: ActionTermCfg, env: ManagerBasedRLEnv):
        self.name = name
        self.cfg = cfg
        self.env = env

    def apply(self, ctrl: torch.Tensor, action: torch.Tensor) -> None:
        """Write the controls for `action` (num_envs, action_dim) into `ctrl` (num_envs, nu)."""
        raise NotImplementedError

    def describe(self) -> str:
        """What the term writes, for the start-up table."""
        return type(self).__name__

    def export_description(self) -> dict[str, Any] | None:
        """What the policy's actions ask for, as plain data, for `canter export`; for terms whose actions
        are no actuator commands (joint actions are described by the exporter itself):
        {"kind": str, "actuator_ids": [the ctrl indices the term writes], "clip": (low, high) or None
        (the clamp the term applies), "fields": [...], "params": {...}}, fields and params as
        `canter.export.metadata.ActionTermInfo` defines them. None (the default): not exportable."""
        return None


class ActionManager(TermManager):
    """Splits the action vector across action terms; keeps the current and previous actions.

    Actuator latency: when a term has max_delay_steps > 0, the manager keeps the last
    K + 1 actions (K = `max_delay`, the largest over the terms) in a ring buffer, and env i's
    actuators receive the action from `delay[i]` control steps ago (clamped to the term's
    max_delay_steps). `delay` is (num_envs,) long, 0 by default (no latency); events set it.
    `action` and `prev_action` stay the policy's latest actions, for rewards and observations.
    Controller rate: `physics_steps_per_tick` physics steps run between two `apply_action()` calls;
    it equals the env's decimation (one call per env step) unless a term asks for a faster rate.
    """

    def __init__(self, cfg: dict[str, ActionTermCfg], env: ManagerBasedRLEnv, console: Console | None):
        if not cfg:
            raise ConfigError("actions: a task needs at least one action term")
        super().__init__("actions", env)
        self.terms = [term_cfg.build(name, env) for name, term_cfg in cfg.items()]
        for term in self.terms:
            self._track(term.name, term)
        self.physics_steps_per_tick = self._tick(env.cfg.decimation)
        self.action_dim = sum(t.action_dim for t in self.terms)
        self.action = torch.zeros(env.num_envs, self.action_dim, device=env.device)
        self.prev_action = torch.zeros_like(self.action)
        self.nonfinite_actions = torch.zeros((), dtype=torch.int64, device=env.device)
        self.clip = env.cfg.clip_actions
        self.max_delay = max(t.cfg.max_delay_steps for t in self.terms)
        self.delay = torch.zeros(env.num_envs, dtype=torch.long, device=env.device)
        # ring buffer (max_delay + 1, num_envs, action_dim); slot `_head` holds the newest action
        self.action_history = torch.zeros(self.max_delay + 1, *self.action.shape, device=env.device)
        self._head = torch.zeros((), dtype=torch.long, device=env.device)
        self._env_index = torch.arange(env.num_envs, device=env.device)
        # action noise and bias (mdp.randomize_action_noise): what the actuators receive is
        # action + bias + std * N(0, 1), drawn per control step; the observations keep `action`
        self.action_bias: torch.Tensor | None = None  # (num_envs, action_dim)
        self.action_noise_std: torch.Tensor | None = None  # (num_envs, 1)
        self.executed = self.action
        rows = [
            (t.name, t.action_dim, t.describe(), t.cfg.max_delay_steps)
            for t in self.terms
        ]
        print_table(
            console,
            f"Active Action Terms (shape: {self.action_dim})",
            ("Name", "Dimension", "ctrl", "Max delay (steps)"),
            rows,
        )

    def _tick(self, decimation: int) -> int:
        rates = {t.physics_steps_per_tick for t in self.terms if t.physics_steps_per_tick is not None}
        if not rates:
            return decimation
        if len(rates) > 1:
            raise ConfigError(f"actions: controller terms ask for different rates {sorted(rates)} (physics steps)")
        steps = rates.pop()
        if steps < 1 or decimation % steps:
            raise ConfigError(f"actions: a controller tick of {steps} physics steps must divide decimation {decimation}")
        return steps

    def term(self, name: str) -> ActionTerm:
        """The action term called `name` (e.g. a controller, for observation terms that read its state)."""
        for term in self.terms:
            if term.name == name:
                return term
        raise ConfigError(f"no action term {name!r} (have: {', '.join(t.name for t in self.terms)})")

    def process_action(self, actions: torch.Tensor) -> None:
        """Store the new action; non-finite entries (a diverged policy) become 0 and are counted, and
        the rest are clamped to ±`clip_actions` when the env config sets it."""
        if actions.shape != self.action.shape:
            raise ConfigError(
                f"actions: expected shape {tuple(self.action.shape)}, got {tuple(actions.shape)}"
            )
        finite = torch.isfinite(actions)
        self.nonfinite_actions += (~finite).any(dim=1).sum()
        self.prev_action.copy_(self.action)
        self.action.copy_(torch.where(finite, actions, torch.zeros_like(actions)))
        if self.clip is not None:
            self.action.clamp_(-self.clip, self.clip)
        self.executed = self.action
        if self.action_bias is not None and self.action_noise_std is not None:
            noise = torch.randn(self.action.shape, generator=self.env.generator, device=self.action.device)
            self.executed = self.action + self.action_bias + self.action_noise_std * noise
        if self.max_delay > 0:
            # advance the ring on the device (no host sync) and store the newest action there
            self._head.add_(1).remainder_(self.max_delay + 1)
            self.action_history.index_copy_(0, self._head.view(1), self.executed.unsqueeze(0))

    def _received(self, term: ActionTerm, start: int) -> torch.Tensor:
        """The actions term `term` (columns start:start + its dim) receives this control step: the
        executed action (noise and bias added), or the one from delay[i] steps ago."""
        stop = start + term.action_dim
        if term.cfg.max_delay_steps == 0:
            return self.executed[:, start:stop]
        # slot of the action from delay[i] steps ago: (head - delay[i]) mod (max_delay + 1)
        delay = self.delay.clamp(0, term.cfg.max_delay_steps)
        slot = (self._head - delay).remainder(self.max_delay + 1)
        return self.action_history[slot, self._env_index, start:stop]

    def apply_action(self) -> None:
        ctrl = self.env.sim.ctrl
        start = 0
        for term in self.terms:
            term.apply(ctrl, self._received(term, start).to(ctrl.dtype))
            start += term.action_dim

    def received_action(self) -> torch.Tensor:
        """(num_envs, action_dim): what the terms received this control step, after the action noise,
        bias and latency of domain randomization (without them: `action`). For checks, not the hot path."""
        parts, start = [], 0
        for term in self.terms:
            parts.append(self._received(term, start))
            start += term.action_dim
        return torch.cat(parts, dim=1)

    def reset(self, env_ids: torch.Tensor) -> None:
        # a device-side fill (t[ids] = 0.0 copies the number to the device, synchronously)
        selection.fill(self.action, env_ids, 0.0)
        selection.fill(self.prev_action, env_ids, 0.0)
        selection.fill(self.action_history, env_ids, 0.0, dim=1)  # a delayed env starts from zero actions
        self.reset_terms(env_ids)

    def state_dict(self) -> dict[str, Any]:
        return {
            "action": self.action.clone(),
            "prev_action": self.prev_action.clone(),
            "delay": self.delay.clone(),
            "action_history": self.action_history.clone(),
            "head": self._head.clone(),
            "terms": self.terms_state_dict(),
            **({"action_bias": self.action_bias.clone(), "action_noise_std": self.action_noise_std.clone()}
               if self.action_bias is not None and self.action_noise_std is not None else {}),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.action.copy_(state["action"])
        self.prev_action.copy_(state["prev_action"])
        self.delay.copy_(state["delay"])
        self.action_history.copy_(state["action_history"])
        self._head.copy_(state["head"])
        self.load_terms_state_dict(state["terms"])
        if "action_bias" in state:
            self.action_bias = state["action_bias"].clone()
            self.action_noise_std = state["action_noise_std"].clone()
