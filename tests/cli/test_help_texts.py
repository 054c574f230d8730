"""Every command's options have their own help text: tyro reads a comment block above a field as the
help of every undocumented field that follows it directly, so an option left without a comment after
one documented above inherits its neighbour's help (`canter eval --help` once described --json as
--task)."""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil

from tyro import _docstrings

import canter.cli


def _args_classes() -> list[type]:
    """The option dataclasses (`*Args`) defined in each module of canter.cli."""
    classes = []
    for info in pkgutil.walk_packages(canter.cli.__path__, "canter.cli."):
        module = importlib.import_module(info.name)
        classes += [obj for name, obj in vars(module).items()
                    if isinstance(obj, type) and dataclasses.is_dataclass(obj) and name.endswith("Args")
                    and obj.__module__ == module.__name__]
    return classes


def test_no_option_inherits_its_neighbours_help():
    classes = _args_classes()
    names = {cls.__name__ for cls in classes}
    assert {"EvalArgs", "PlayArgs", "TimeToTargetArgs", "AtariArgs"} <= names
    shared = []
    for cls in classes:
        fields = [field.name for field in dataclasses.fields(cls)]
        helps = [_docstrings.get_field_docstring(cls, field, ()) for field in fields]
        for i in range(1, len(fields)):
            if helps[i] and helps[i] == helps[i - 1]:
                shared.append(f"{cls.__name__}: --{fields[i]} has --{fields[i - 1]}'s help {helps[i]!r}")
    assert not shared, "\n".join(shared)
