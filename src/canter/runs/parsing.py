"""tyro with one-line errors: every parse failure becomes a CanterError naming the flag and the problem.

tyro prints a box and raises SystemExit(2) on a bad command line. `parse` captures that box (with a
wide terminal, so nothing wraps) and turns its first section into one line, e.g.
`--max-iterations: invalid value 'abc' (expected INT)` or `unrecognized options: --env.nosuch 1`.
Help (`--help`) still prints to stdout and exits 0.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import os
import re
from collections.abc import Iterator, Sequence
from typing import Any

from canter.core.errors import CanterError


class ScriptParser(argparse.ArgumentParser):
    """argparse for the scripts in scripts/: a bad command line is one line, `PROG: error: MESSAGE`, and
    exit code 2, as Canter's own commands do (argparse's default prints its usage block first)."""

    def error(self, message: str):  # type: ignore[override]
        import sys

        print(f"{self.prog}: error: {' '.join(message.split())}", file=sys.stderr)
        raise SystemExit(2)


_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_BOX = "│╭╮╰╯─┃━┏┓┗┛┡┩╇┼├┤"


@contextlib.contextmanager
def _wide_terminal() -> Iterator[None]:
    previous = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "4000"
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = previous


def stray_options(rest: Sequence[str]) -> list[str]:
    """The tokens of `rest` that are options other than `--env.*` / `--agent.*` overrides: what a
    command that passes overrides on must refuse. A negative number (`-1`, `-0.5`, `-1e-3`) is a
    value, e.g. of `--env.commands.base-velocity.lin-vel-x -1 1`."""
    return [token for token in rest if token.startswith("-") and not _is_number(token)
            and not token.startswith(("--env.", "--agent."))]


def without_env_overrides(overrides: Sequence[str]) -> list[str]:
    """`overrides` (`--env.*` / `--agent.*` tokens, as typed) less every `--env.*` option and its values,
    e.g. `--env.x 1 --agent.algo.gamma 0.9` -> `--agent.algo.gamma 0.9`; `--env.x=1` is one token."""
    kept: list[str] = []
    keep = False
    for token in overrides:
        if token.startswith("-") and not _is_number(token):
            keep = not token.startswith("--env.")
        if keep:
            kept.append(token)
    return kept


def _is_number(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True


def parse(f: Any, args: Sequence[str], *, prog: str, unknown: bool = False, **kwargs: Any) -> Any:
    """tyro.cli(f, args=args, prog=prog, return_unknown_args=unknown, **kwargs) whose errors are one
    CanterError line. With unknown=True returns (value, unknown args) like tyro."""
    import tyro

    captured = io.StringIO()
    if any(token in ("-h", "--help") for token in args):  # help goes to stdout at the terminal's width
        return tyro.cli(f, args=list(args), prog=prog, return_unknown_args=unknown, **kwargs)
    try:
        with _wide_terminal(), contextlib.redirect_stderr(captured):
            parsed = tyro.cli(f, args=list(args), prog=prog, return_unknown_args=unknown, **kwargs)
    except SystemExit as exit_:
        if exit_.code in (0, None):
            raise
        raise CanterError(one_line(captured.getvalue())) from None
    check_seeds(parsed[0] if unknown else parsed, prefixed=tyro.conf.OmitArgPrefixes not in kwargs.get("config", ()))
    return parsed


def check_seeds(value: Any, *, prefixed: bool = True, prefix: str = "") -> None:
    """Refuses a negative `seed` anywhere in a parsed command (a dataclass and the dataclasses in its
    fields) in one line naming its flag (`--seed`, or `--env.seed` where flags carry their prefixes):
    seeds feed numpy's SeedSequence and ale-py, which take none."""
    if not dataclasses.is_dataclass(value) or isinstance(value, type):
        return
    for field in dataclasses.fields(value):
        item = getattr(value, field.name, None)
        name = prefix + field.name.replace("_", "-")
        if field.name == "seed" and isinstance(item, int) and not isinstance(item, bool) and item < 0:
            raise CanterError(f"--{name if prefixed else 'seed'}: must be >= 0, got {item}")
        check_seeds(item, prefixed=prefixed, prefix=name + ".")


def _sections(text: str) -> tuple[str, list[list[str]]]:
    """(title, sections of content lines) of a tyro error box, drawn in UTF-8 or in ASCII (when
    stdout's encoding is not UTF-8): the title is the first line, rules of dashes part the sections."""
    title = ""
    sections: list[list[str]] = [[]]
    for line in (_ANSI.sub("", raw) for raw in text.splitlines()):
        body = line.strip().strip("│").strip()
        if not title:
            title = body.strip(_BOX + " -")
            continue
        if not body or set(body) <= set(_BOX + " -"):
            if sections[-1]:
                sections.append([])
            continue
        sections[-1].append(body)
    return title, [s for s in sections if s]


def one_line(text: str) -> str:
    """The message of a tyro error box as one line."""
    title, sections = _sections(text)
    if not sections:
        return title or "invalid command line"
    message = " ".join(sections[0])
    parsed = re.match(r"Error parsing (\S+): (.*)", message)
    if parsed:
        flag, detail = parsed.groups()
        values = re.search(r"instantiated from (\[.*?\])", detail)
        metavar = next((line.split(None, 1)[1] for s in sections[1:] for line in s
                        if line.startswith(flag + " ") and len(line.split(None, 1)) > 1), "")
        metavar = metavar.replace("{None}|", "").replace("|{None}", "")
        if values:
            shown = values.group(1).strip("[]")
            return f"{flag}: invalid value {shown}" + (f" (expected {metavar})" if metavar else "")
        converted = re.match(r"(?:invalid literal for (int)\(\) with base 10|could not convert string to (float)): (.*)",
                             detail)
        if converted:
            kind = "an integer" if converted.group(1) else "a number"
            return f"{flag}: invalid value {converted.group(3)} (expected {kind})"
        return f"{flag}: {detail}"
    if message.startswith("Unrecognized options:"):
        similar = [line for s in sections[1:] for line in s if line.startswith("--") and "Similar" not in line]
        hint = f" (did you mean {similar[0].split()[0]}?)" if similar and "Similar" in " ".join(
            " ".join(s) for s in sections[1:]) else ""
        return "unrecognized options: " + message.split(":", 1)[1].strip().replace(",", "") + hint
    if message.startswith("For full helptext"):
        return title
    choice = re.match(r"invalid choice (.*) for argument '(\S+)'\. Expected one of \((.*)\)", message)
    if choice:  # tyro lists the choices in no fixed order, and an optional flag's 'None' (its unset default)
        value, flag, listed = choice.groups()
        choices = sorted({c.strip().strip("'") for c in listed.split(",")} - {"None", ""})
        return f"{flag}: invalid choice {value} (expected one of: {', '.join(choices)})"
    return message
