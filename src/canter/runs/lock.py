"""The run-directory lock: one writer (train / resume) per run directory at a time.

`RunLock(run_dir).acquire(command)` takes an exclusive `fcntl.flock` on `RUN_DIR/.lock` and writes
who holds it (JSON: pid, host, command, started). The kernel releases a flock when its holder's file
descriptor closes, including when the process is killed (kill -9), so a stale lock file never
blocks a new run: only a live holder does. A second writer gets a CanterError naming the holder.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import socket
import time
from pathlib import Path
from typing import IO

from canter.core.errors import CanterError
from canter.core.files import WriteError, write_failure

LOCK_FILE = ".lock"
# set by a parent that holds the lock for the ranks it starts (`canter train --nproc N`)
HELD_VARIABLE = "CANTER_RUN_DIR_LOCKED"


class RunLock:
    """An exclusive lock on a run directory, held until release() or the process ends."""

    def __init__(self, run_dir: str | Path):
        self.run_dir = Path(run_dir)
        self.path = self.run_dir / LOCK_FILE
        self._file: IO[str] | None = None

    def acquire(self, command: str) -> RunLock:
        """Takes the lock or raises CanterError naming the process that holds it; a parent that set
        CANTER_RUN_DIR_LOCKED to this directory holds it already for us (a no-op then)."""
        if os.environ.get(HELD_VARIABLE) == str(self.run_dir.resolve()):
            return self
        try:
            handle = open(self.path, "a+")  # noqa: SIM115 - held open for the lock's lifetime
        except OSError as err:
            raise CanterError(f"cannot write to run directory {self.run_dir}: {err.strerror or err}") from None
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as err:
            handle.seek(0)
            holder = handle.read()
            handle.close()
            if err.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise CanterError(f"cannot lock run directory {self.run_dir}: {err.strerror or err}") from None
            raise CanterError(f"run directory {self.run_dir} is in use by {describe_holder(holder)}") from None
        info = {"pid": os.getpid(), "host": socket.gethostname(), "command": command,
                "started": time.strftime("%Y-%m-%d %H:%M:%S")}
        try:
            handle.seek(0)
            handle.truncate()
            handle.write(json.dumps(info))
            handle.flush()
        except OSError as err:
            with contextlib.suppress(OSError):  # closing flushes what could not be written, and fails again
                handle.close()
            raise WriteError(write_failure(self.path, err)) from None
        self._file = handle
        return self

    def release(self) -> None:
        if self._file is not None:
            self._file.close()  # closing the descriptor releases the flock
            self._file = None

    def __enter__(self) -> RunLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def describe_holder(text: str) -> str:
    """'process PID (host H, since T: COMMAND)' from a lock file's JSON (or what is known of it)."""
    try:
        info = json.loads(text)
        return f"process {info['pid']} (host {info['host']}, since {info['started']}: {info['command']})"
    except (ValueError, KeyError, TypeError):
        return "another process"
