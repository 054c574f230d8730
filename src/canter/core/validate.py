"""Config validation shared by every config dataclass: field checks that raise ConfigError naming
the dotted field, a `Validated` base whose `__post_init__` runs `validate()`, and `validate_tree`,
which walks nested configs and names each failure by its path (`rewards.alive.weight: ...`).

A config subclasses `Validated` and overrides `validate()` with `require_*` calls on its own fields
(it calls `super().validate()` first when its base has fields). Validation is re-runnable: code that
sets fields after construction (tyro, CLI shortcuts, tests) calls `validate_tree(cfg)` afterwards.
Inside `deferred_validation()` construction does not validate, so a parser can build the whole
tree and `validate_tree` then reports the first bad field by its full path.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import types
import typing
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from functools import cache
from typing import Any, ClassVar, Literal

from canter.core.errors import ConfigError

_DEFERRED: ContextVar[bool] = ContextVar("canter_deferred_validation", default=False)


class FieldError(ConfigError):
    """A ConfigError about one field; `field` is its dotted path within the config validated."""

    def __init__(self, field: str, problem: str):
        super().__init__(f"{field}: {problem}")
        self.field = field
        self.problem = problem

    def within(self, prefix: str) -> FieldError:
        """The same error with `prefix.` in front of the field (unchanged for an empty prefix)."""
        return FieldError(f"{prefix}.{self.field}" if prefix else self.field, self.problem)


class Validated:
    """Base of config dataclasses: construction validates (outside `deferred_validation()`).

    `config_name` prefixes the fields in errors raised at construction (e.g. "algo"); inside a tree,
    `validate_tree` names them by their path instead.
    """

    config_name: ClassVar[str] = ""

    def __post_init__(self) -> None:
        if not _DEFERRED.get():
            try:
                self.validate()
            except FieldError as err:
                raise err.within(self.config_name or type(self).__name__) from None

    def validate(self) -> None:
        """Check this config's own fields (not nested configs: `validate_tree` visits those)."""


@contextlib.contextmanager
def deferred_validation() -> Iterator[None]:
    """Build configs without validating them (call `validate_tree` on the result afterwards)."""
    token = _DEFERRED.set(True)
    try:
        yield
    finally:
        _DEFERRED.reset(token)


def validate_tree(cfg: Any, path: str = "") -> None:
    """Validate `cfg` and every config nested in it (dataclass fields, dict values, list/tuple items),
    parents before children. Raises ConfigError "<path>.<field>: <problem>" for the first failure."""
    if dataclasses.is_dataclass(cfg) and not isinstance(cfg, type):
        if isinstance(cfg, Validated):
            try:
                cfg.validate()
            except FieldError as err:
                raise err.within(path) from None
        for item in dataclasses.fields(cfg):
            _visit(getattr(cfg, item.name), _join(path, item.name))
    elif isinstance(cfg, Mapping):
        for key, value in cfg.items():
            _visit(value, _join(path, str(key)))
    elif isinstance(cfg, (list, tuple)):
        for index, value in enumerate(cfg):
            _visit(value, _join(path, str(index)))


def _visit(value: Any, path: str) -> None:
    if isinstance(value, (Mapping, list, tuple)) or (dataclasses.is_dataclass(value) and not isinstance(value, type)):
        validate_tree(value, path)


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


# --- field checks: each reads getattr(cfg, name) and raises FieldError(name, ...) -----------------
def fail(name: str, problem: str) -> FieldError:
    """The error for field `name` (raise it): for checks the helpers below do not cover."""
    return FieldError(name, problem)


def _number(cfg: Any, name: str) -> float:
    value = getattr(cfg, name)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise FieldError(name, f"must be a number, got {value!r}")
    return value


def require_finite(cfg: Any, *names: str) -> None:
    """Each field is a finite number (not nan, not +-inf)."""
    for name in names:
        value = _number(cfg, name)
        if not math.isfinite(value):
            raise FieldError(name, f"must be finite, got {value}")


def require_positive(cfg: Any, *names: str) -> None:
    """Each field is a finite number > 0."""
    for name in names:
        require_finite(cfg, name)
        if not getattr(cfg, name) > 0:
            raise FieldError(name, f"must be > 0, got {getattr(cfg, name)}")


def require_at_least(cfg: Any, name: str, minimum: float, *, integer: bool = False) -> None:
    """The field is a finite number >= minimum (an int when `integer`)."""
    require_finite(cfg, name)
    value = getattr(cfg, name)
    if integer and int(value) != value:
        raise FieldError(name, f"must be an integer, got {value}")
    if not value >= minimum:
        raise FieldError(name, f"must be >= {minimum}, got {value}")


def require_in_range(cfg: Any, name: str, low: float, high: float) -> None:
    """The field is a finite number in [low, high]."""
    require_finite(cfg, name)
    value = getattr(cfg, name)
    if not low <= value <= high:
        raise FieldError(name, f"must be in [{low}, {high}], got {value}")



def require_pair(
    cfg: Any, name: str, *, ordered: bool = True, minimum: float | None = None, strict: bool = False
) -> None:
    """The field is a (low, high) pair of finite numbers: low <= high when `ordered` (low < high
    when `strict`), both >= minimum when given."""
    value = getattr(cfg, name)
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        raise FieldError(name, f"must be a (low, high) pair, got {value!r}")
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in value):
        raise FieldError(name, f"must hold two finite numbers, got {tuple(value)}")
    low, high = value
    if minimum is not None and min(low, high) < minimum:
        raise FieldError(name, f"values must be >= {minimum}, got {tuple(value)}")
    if strict and not low < high:
        raise FieldError(name, f"need low < high, got {tuple(value)}")
    if ordered and not low <= high:
        raise FieldError(name, f"need low <= high, got {tuple(value)}")


def require_choice(cfg: Any, *names: str) -> None:
    """Each field holds one of the values of its `Literal[...]` annotation (None too when the
    annotation allows it)."""
    for name in names:
        choices = literal_choices(type(cfg), name)
        value = getattr(cfg, name)
        if value not in choices:
            shown = ", ".join(repr(c) for c in choices)
            raise FieldError(name, f"{value!r} is not one of {shown}")


@cache
def literal_choices(cls: type, name: str) -> tuple[Any, ...]:
    """The values a `Literal` (or `Literal | None`) field of dataclass `cls` may hold."""
    hint = typing.get_type_hints(cls)[name]
    choices: list[Any] = []
    for part in _union_parts(hint):
        if typing.get_origin(part) is Literal:
            choices.extend(typing.get_args(part))
        elif part is type(None):
            choices.append(None)
    if not choices:
        raise TypeError(f"{cls.__name__}.{name} is not annotated with a Literal")
    return tuple(choices)


def _union_parts(hint: Any) -> tuple[Any, ...]:
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return typing.get_args(hint)
    return (hint,)
