"""What every manager shares: term configs, parameter validation, name resolution, the lifecycle of
stateful terms, start-up tables.

A term is a small function `(env, **params) -> Tensor`, or a `ManagerTerm` subclass for terms that
keep state between steps (built once with `(cfg, env)`, then called like a function). Parameters
are checked against the function's signature when the manager is built, and `Sel` parameters are
resolved to index tensors then, so the step loop does no name lookups.

Lifecycle (the same in all seven managers, through `TermManager`): a manager builds its terms with
`_build` (or registers a term object with `_track`); every term that is `Stateful` (`ManagerTerm`,
action terms, command terms) is then reset for the envs that start a new episode (the manager's
`reset(env_ids)`), and saved and restored with the env (`state_dict()["terms"][name]`), so a
checkpoint resumes it bit for bit.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import torch
from rich.console import Console
from rich.table import Table

from canter.core.errors import CanterError, ConfigError
from canter.core.validate import Validated, fail
from canter.scene.entity import Sel

if TYPE_CHECKING:
    from canter.envs.manager_env import ManagerBasedRLEnv


@dataclass(kw_only=True)
class TermCfg(Validated):
    """A term: `func` and the keyword parameters it is called with."""

    func: Callable[..., Any]
    params: dict[str, Any] = field(default_factory=dict)

    def validate(self) -> None:
        if not callable(self.func):
            raise fail("func", f"must be callable, got {self.func!r}")


class Stateful:
    """A term that keeps per-env state between steps. Its manager calls `reset(env_ids)` when those
    envs start a new episode (`env_ids` a selection, indices or a mask: see canter.core.selection) and saves `state_dict()` (tensors only) with the env; the default
    `load_state_dict` copies each tensor into the attribute of the same name."""

    def reset(self, env_ids: torch.Tensor) -> None:
        """Clear the state of the given envs at the start of their new episode."""

    def state_dict(self) -> dict[str, torch.Tensor]:
        return {}

    def load_state_dict(self, state: dict[str, torch.Tensor]) -> None:
        for key, value in state.items():
            getattr(self, key).copy_(value)


class ManagerTerm(Stateful):
    """Base for stateful function-like terms (observation, reward, termination, event, curriculum).
    Subclasses override `__call__` and, if they keep per-env state, the `Stateful` methods."""

    def __init__(self, cfg: TermCfg, env: ManagerBasedRLEnv):
        self.cfg = cfg
        self.env = env

    def __call__(self, env: ManagerBasedRLEnv, **params: Any) -> Any:
        raise NotImplementedError


class TermManager:
    """What the seven managers share: building terms and the lifecycle of the stateful ones.

    `kind` names the manager in errors ("reward", "observation[policy]", ...).
    """

    def __init__(self, kind: str, env: ManagerBasedRLEnv):
        self.kind = kind
        self.env = env
        self._stateful: dict[str, Stateful] = {}

    def _build(self, name: str, cfg: TermCfg, leading: int = 1, key: str | None = None) -> tuple[Callable[..., Any], dict[str, Any]]:
        """`build_term` for this manager; a stateful term is tracked under `key` (default: name)."""
        func, params = build_term(self.kind, name, cfg, self.env, leading)
        self._track(key or name, func)
        return func, params

    def _track(self, key: str, term: Any) -> None:
        """Track `term` under `key` if it keeps state (a `Stateful`)."""
        if isinstance(term, Stateful):
            if key in self._stateful:
                raise ConfigError(f"{self.kind}: two stateful terms named {key!r}")
            self._stateful[key] = term

    def reset_terms(self, env_ids: torch.Tensor) -> None:
        """Reset the stateful terms for the selection `env_ids` (indices or a mask)."""
        for term in self._stateful.values():
            term.reset(env_ids)

    def terms_state_dict(self) -> dict[str, dict[str, torch.Tensor]]:
        """Copies of every stateful term's state, by term key."""
        return {key: {k: v.clone() for k, v in term.state_dict().items()} for key, term in self._stateful.items()}

    def load_terms_state_dict(self, state: dict[str, dict[str, torch.Tensor]]) -> None:
        """Restore `terms_state_dict()`; a term missing from `state` is an error (another config)."""
        for key, term in self._stateful.items():
            if key not in state:
                raise CanterError(
                    f"the saved env state has no state for {self.kind} term {key!r} "
                    "(it was saved with a different task config)"
                )
            term.load_state_dict(state[key])


def _callable_signature(func: Callable[..., Any]) -> inspect.Signature:
    target = func.__call__ if isinstance(func, type) and issubclass(func, ManagerTerm) else func
    return inspect.signature(target)


def build_term(
    manager: str, name: str, cfg: TermCfg, env: ManagerBasedRLEnv, leading: int = 1
) -> tuple[Callable[..., Any], dict[str, Any]]:
    """Validate `cfg.params` against the term's signature, resolve `Sel` parameters, instantiate
    ManagerTerm classes. `leading` is the number of positional arguments the manager passes itself
    (env, or env and env_ids). Returns the callable and its resolved parameters."""
    if not callable(cfg.func):
        raise ConfigError(f"{manager} term {name!r}: func must be callable, got {cfg.func!r}")
    signature = _callable_signature(cfg.func)
    parameters = list(signature.parameters.values())
    is_class = isinstance(cfg.func, type)
    if is_class:
        parameters = parameters[1:]  # self
    accepts_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)
    named = {p.name: p for p in parameters[leading:] if p.kind is not inspect.Parameter.VAR_KEYWORD}
    for key in cfg.params:
        if key not in named and not accepts_any:
            raise ConfigError(
                f"{manager} term {name!r}: unknown parameter {key!r} "
                f"({_describe(cfg.func)} accepts: {', '.join(named) or 'none'})"
            )
    missing = [k for k, p in named.items() if p.default is inspect.Parameter.empty and k not in cfg.params]
    if missing:
        raise ConfigError(f"{manager} term {name!r}: missing parameter(s) {', '.join(missing)}")
    params: dict[str, Any] = {}
    for key, value in cfg.params.items():
        try:
            params[key] = value.resolve(env.scene) if isinstance(value, Sel) else value
        except ConfigError as err:
            raise ConfigError(f"{manager} term {name!r}, parameter {key!r}: {err}") from err
    func = cfg.func(cfg, env) if is_class else cfg.func
    return func, params


def _describe(func: Callable[..., Any]) -> str:
    return getattr(func, "__name__", type(func).__name__)


def print_table(
    console: Console | None, title: str, columns: tuple[str, ...], rows: list[tuple[Any, ...]]
) -> None:
    """Print the active terms of a manager as a table (Isaac Lab-style start-up listing); a manager
    without terms prints nothing."""
    if console is None or not rows:
        return
    table = Table(title=title, title_justify="left", show_lines=False)
    for column in ("Index", *columns):
        table.add_column(column)
    for index, row in enumerate(rows):
        table.add_row(str(index), *[str(c) for c in row])
    console.print(table)
