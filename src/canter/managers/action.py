"""Action manager: maps the policy's (num_envs, action_dim) output to actuator controls."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

import torch

from canter.core.errors import ConfigError
from canter.managers.term import print_table
from canter.scene.entity import Sel, actuators

if TYPE_CHECKING:
    from rich.console import Console

    from canter.envs.manager_env import ManagerBasedRLEnv


@dataclass(kw_only=True)
class ActionTermCfg:
    """ctrl[:, actuators] = offset + scale * clip(action).

    offset: "zero" for torque/force motors; "default_joint_pos" for position actuators, so that a
        zero action holds the default pose (targets are offsets around it).
    max_delay_steps: the longest actuator latency, in control steps, these actuators can be given
        (per env, e.g. by mdp.randomize_action_delay); delays beyond it are clamped to it. 0: never
        delayed.
    """

    actuators: Sel = field(default_factory=actuators)
    scale: float = 1.0
    offset: Literal["zero", "default_joint_pos"] = "zero"
    clip: tuple[float, float] | None = None
    max_delay_steps: int = 0

    def __post_init__(self) -> None:
        if self.clip is not None and not self.clip[0] < self.clip[1]:
            raise ConfigError(f"actions.clip: low must be < high, got {self.clip}")
        if self.max_delay_steps < 0:
            raise ConfigError(f"actions.max_delay_steps: must be >= 0, got {self.max_delay_steps}")

    def build(self, name: str, env: ManagerBasedRLEnv) -> ActionTerm:
        """The term this config describes; subclasses (e.g. controllers) return their own term class."""
        return ActionTerm(name, self, env)


def joint_effort_action(
    *names: str, scale: float = 1.0, clip: tuple[float, float] | None = None, max_delay_steps: int = 0
) -> ActionTermCfg:
    """Torque/force motors driven directly by the scaled action."""
    return ActionTermCfg(
        actuators=actuators(*names), scale=scale, offset="zero", clip=clip, max_delay_steps=max_delay_steps
    )


def joint_position_action(
    *names: str, scale: float = 0.25, clip: tuple[float, float] | None = None, max_delay_steps: int = 0
) -> ActionTermCfg:
    """Position actuators (PD inside MuJoCo at physics rate) targeting default pose + scale * action."""
    return ActionTermCfg(
        actuators=actuators(*names),
        scale=scale,
        offset="default_joint_pos",
        clip=clip,
        max_delay_steps=max_delay_steps,
    )


class ActionTerm:
    """One group of actuators written from one slice of the action vector.

    A controller term sets `physics_steps_per_tick`: the env then calls `apply` every that many
    physics steps (the controller rate) with the same action, instead of once per env step.
    Terms that keep per-env state override `reset`, `state_dict` and `load_state_dict`.
    """

    physics_steps_per_tick: int | None = None

    def __init__(self, name: str, cfg: ActionTermCfg, env: ManagerBasedRLEnv):
        self.name = name
        self.cfg = cfg
        resolved = cfg.actuators.resolve(env.scene)
        self.names = resolved.names
        self.action_dim = resolved.count
        self.ctrl_ids = resolved.ids
        model = env.scene.model
        dtype = env.sim.dtype
        offset = torch.zeros(self.action_dim, dtype=dtype, device=env.device)
        if cfg.offset == "default_joint_pos":
            # the joint each actuator transmits to (actuator_trnid[:, 0] for joint transmissions)
            adr = [int(model.jnt_qposadr[model.actuator_trnid[i, 0]]) for i in resolved.ids.tolist()]
            offset = env.scene.default_qpos[torch.tensor(adr, device=env.device)]
        self.offset = offset
        # one contiguous block of ctrl lets apply() write a slice instead of an index_put
        ids = resolved.ids.tolist()
        self._slice = slice(ids[0], ids[-1] + 1) if ids == list(range(ids[0], ids[0] + len(ids))) else None

    def apply(self, ctrl: torch.Tensor, action: torch.Tensor) -> None:
        if self.cfg.clip is not None:
            action = action.clamp(self.cfg.clip[0], self.cfg.clip[1])
        target = self.offset + self.cfg.scale * action
        if self._slice is not None:
            ctrl[:, self._slice] = target
        else:
            ctrl[:, self.ctrl_ids] = target.to(ctrl.dtype)

    def reset(self, env_ids: torch.Tensor) -> None:
        """Clear the per-env state of the given envs (none for plain terms)."""

    def state_dict(self) -> dict[str, torch.Tensor]:
        return {}

    def load_state_dict(self, state: dict[str, torch.Tensor]) -> None:
        """Restore `state_dict()` (nothing for plain terms)."""


class ActionManager:
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
        self.env = env
        self.terms = [term_cfg.build(name, env) for name, term_cfg in cfg.items()]
        self.physics_steps_per_tick = self._tick(env.cfg.decimation)
        self.action_dim = sum(t.action_dim for t in self.terms)
        self.action = torch.zeros(env.num_envs, self.action_dim, device=env.device)
        self.prev_action = torch.zeros_like(self.action)
        self.nonfinite_actions = torch.zeros((), dtype=torch.int64, device=env.device)
        self.max_delay = max(t.cfg.max_delay_steps for t in self.terms)
        self.delay = torch.zeros(env.num_envs, dtype=torch.long, device=env.device)
        # ring buffer (max_delay + 1, num_envs, action_dim); slot `_head` holds the newest action
        self.action_history = torch.zeros(self.max_delay + 1, *self.action.shape, device=env.device)
        self._head = torch.zeros((), dtype=torch.long, device=env.device)
        self._env_index = torch.arange(env.num_envs, device=env.device)
        rows = [
            (t.name, t.action_dim, f"{t.cfg.offset} + {t.cfg.scale} * a", t.cfg.max_delay_steps)
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
        """Store the new action; non-finite entries (a diverged policy) become 0 and are counted."""
        if actions.shape != self.action.shape:
            raise ConfigError(
                f"actions: expected shape {tuple(self.action.shape)}, got {tuple(actions.shape)}"
            )
        finite = torch.isfinite(actions)
        self.nonfinite_actions += (~finite).any(dim=1).sum()
        self.prev_action.copy_(self.action)
        self.action.copy_(torch.where(finite, actions, torch.zeros_like(actions)))
        if self.max_delay > 0:
            # advance the ring on the device (no host sync) and store the newest action there
            self._head.add_(1).remainder_(self.max_delay + 1)
            self.action_history.index_copy_(0, self._head.view(1), self.action.unsqueeze(0))

    def apply_action(self) -> None:
        ctrl = self.env.sim.ctrl
        start = 0
        for term in self.terms:
            stop = start + term.action_dim
            if term.cfg.max_delay_steps == 0:
                action = self.action[:, start:stop]
            else:
                # slot of the action from delay[i] steps ago: (head - delay[i]) mod (max_delay + 1)
                delay = self.delay.clamp(0, term.cfg.max_delay_steps)
                slot = (self._head - delay).remainder(self.max_delay + 1)
                action = self.action_history[slot, self._env_index, start:stop]
            term.apply(ctrl, action.to(ctrl.dtype))
            start = stop

    def reset(self, env_ids: torch.Tensor) -> None:
        self.action[env_ids] = 0.0
        self.prev_action[env_ids] = 0.0
        self.action_history[:, env_ids] = 0.0  # a delayed env starts its episode from zero actions
        for term in self.terms:
            term.reset(env_ids)

    def state_dict(self) -> dict[str, torch.Tensor]:
        state = {
            "action": self.action.clone(),
            "prev_action": self.prev_action.clone(),
            "delay": self.delay.clone(),
            "action_history": self.action_history.clone(),
            "head": self._head.clone(),
        }
        for term in self.terms:
            state.update({f"term/{term.name}/{k}": v.clone() for k, v in term.state_dict().items()})
        return state

    def load_state_dict(self, state: dict[str, torch.Tensor]) -> None:
        self.action.copy_(state["action"])
        self.prev_action.copy_(state["prev_action"])
        if "delay" in state:  # checkpoints written before actuator latency existed have none
            self.delay.copy_(state["delay"])
            self.action_history.copy_(state["action_history"])
            self._head.copy_(state["head"])
        for term in self.terms:
            prefix = f"term/{term.name}/"
            own = {k[len(prefix) :]: v for k, v in state.items() if k.startswith(prefix)}
            if own:
                term.load_state_dict(own)
