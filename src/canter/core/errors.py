"""The one exception type the CLI turns into a one-line message and a non-zero exit."""

from __future__ import annotations


class CanterError(Exception):
    """A user-facing error: bad input, unknown name, broken file. Its message is one line."""


class ConfigError(CanterError):
    """A config field holds a value that cannot work; the message names the field."""


class Interrupted(Exception):
    """Work stopped by a signal (Ctrl-C, SIGTERM) before it had anything to report; the CLI says so in one
    line and exits with 128 + the signal's number."""

    def __init__(self, signum: int):
        import signal

        super().__init__(f"interrupted by {signal.Signals(signum).name}")
        self.signum = signum
