"""What every manager shares: term configs, parameter validation, name resolution, start-up tables.

A term is a small function `(env, **params) -> Tensor`, or a `ManagerTerm` subclass for terms that
keep state between steps (built once with `(cfg, env)`, then called like a function). Parameters
are checked against the function's signature when the manager is built, and `Sel` parameters are
resolved to index tensors then, so the step loop does no name lookups.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import torch
from rich.console import Console
from rich.table import Table

from canter.core.errors import ConfigError
from canter.scene.entity import Sel

if TYPE_CHECKING:
    from canter.envs.manager_env import ManagerBasedRLEnv


@dataclass(kw_only=True)
class TermCfg:
    """A term: `func` and the keyword parameters it is called with."""

    func: Callable[..., Any]
    params: dict[str, Any] = field(default_factory=dict)


class ManagerTerm:
    """Base for stateful terms. Subclasses override `__call__` and, if they keep per-env state,
    `reset(env_ids)` and `state_dict()` / `load_state_dict()` (tensors only)."""

    def __init__(self, cfg: TermCfg, env: ManagerBasedRLEnv):
        self.cfg = cfg
        self.env = env

    def __call__(self, env: ManagerBasedRLEnv, **params: Any) -> Any:
        raise NotImplementedError

    def reset(self, env_ids: torch.Tensor) -> None:
        """Clear the state of the given envs at the start of their new episode."""

    def state_dict(self) -> dict[str, torch.Tensor]:
        return {}

    def load_state_dict(self, state: dict[str, torch.Tensor]) -> None:
        for key, value in state.items():
            getattr(self, key).copy_(value)


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
    """Print the active terms of a manager as a table (Isaac Lab-style start-up listing)."""
    if console is None:
        return
    table = Table(title=title, title_justify="left", show_lines=False)
    for column in ("Index", *columns):
        table.add_column(column)
    for index, row in enumerate(rows):
        table.add_row(str(index), *[str(c) for c in row])
    console.print(table)
