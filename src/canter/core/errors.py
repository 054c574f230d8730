"""The one exception type the CLI turns into a one-line message and a non-zero exit."""

from __future__ import annotations


class CanterError(Exception):
    """A user-facing error: bad input, unknown name, broken file. Its message is one line."""


class ConfigError(CanterError):
    """A config field holds a value that cannot work; the message names the field."""
