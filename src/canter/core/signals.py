"""The stop signals of a long command (training, a benchmark, a video) and the one way they are caught.

SIGINT (Ctrl-C), SIGTERM (a scheduler, `kill`) and SIGHUP (a closed terminal) ask the work under way to
stop where it can keep what it has (a checkpoint, the video so far); the command then exits 128 + signum.
"""

from __future__ import annotations

import errno
import os
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import Any

# in the order a simultaneous arrival reports them (the runner's stop flag across ranks names the first)
STOP_SIGNALS: tuple[signal.Signals, ...] = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


@contextmanager
def catch_stop_signals(on_stop: Callable[[signal.Signals], None] | None = None) -> Iterator[list[signal.Signals]]:
    """Within: the first stop signal is appended to the yielded list and passed to `on_stop` (e.g. to
    set an event the work polls); a second SIGINT raises KeyboardInterrupt (Ctrl-C twice: stop now),
    while other repeats (a launcher's SIGTERM after the terminal's SIGINT) only repeat the request.
    The previous handlers come back on exit. Only the main thread can own handlers: elsewhere nothing
    is caught and the list stays empty."""
    received: list[signal.Signals] = []
    if threading.current_thread() is not threading.main_thread():
        yield received
        return

    def on_signal(signum: int, frame: Any) -> None:
        if received and signum == signal.SIGINT:
            raise KeyboardInterrupt
        if not received:
            received.append(signal.Signals(signum))
            if on_stop is not None:
                on_stop(received[0])

    previous = {signum: signal.signal(signum, on_signal) for signum in STOP_SIGNALS}
    try:
        yield received
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def silence_output(*streams: Any) -> None:
    """Points the streams' file descriptors (stdout, stderr) at /dev/null. Their reader went away (a
    closed pipe: `| head`, a pager that quit, a `tee` that was killed), so a write raised
    BrokenPipeError; what is printed after, and Python's flush at exit, then goes nowhere instead of
    failing again. Python ignores SIGPIPE, so a closed pipe reaches the code as that error, not as a
    signal; a command that meets it stops as a signal would stop it (exit 128 + SIGPIPE)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        for stream in streams:
            with suppress(OSError, ValueError, AttributeError):  # a stream with no descriptor of its own (a test's)
                os.dup2(devnull, stream.fileno())
    finally:
        os.close(devnull)


def closed_pipe_raises() -> None:
    """From here on, a rich console whose reader went away raises BrokenPipeError, where rich's own answer
    ends the process at once with exit 1 (SystemExit), as if the command had failed. The entry point
    installs it and turns that error into a quiet exit 128 + SIGPIPE, as a signal would end the
    command; training's console has its own answer, which stops the run keeping its progress
    (canter.rl.logger)."""
    from rich.console import Console

    Console.on_broken_pipe = _raise_broken_pipe  # rich's documented hook (it suggests a subclass; ours are many)


def _raise_broken_pipe(console: Any) -> None:
    console.quiet = True  # nothing more from this console
    raise BrokenPipeError(errno.EPIPE, os.strerror(errno.EPIPE))
