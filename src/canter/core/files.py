"""Files written whole or not at all, and one line on why a write failed.

`atomic_write(path)` yields a temporary path beside `path` (`.<name>.<pid>.<random>.tmp`); when the
block ends normally the temporary file replaces `path` in one rename, so a reader never sees half a
file and a crash mid-write leaves the previous file as it was. A failed write (a full disk, a
folder that is not writable) removes the temporary file and raises a WriteError naming the file: a
full disk says so, with the bytes free (and needed, where the writer knows them). Checkpoints,
run files, progress.csv, the training curve and bench reports are all written this way.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from canter.core.errors import CanterError

# torch.save's writer reports a failed write (a full disk among the causes) as a RuntimeError
_TORCH_WRITE_FAILURES = ("inline_container", "file write failed", "PytorchStreamWriter")


class WriteError(CanterError):
    """A file could not be written; the message names it and why (a full disk, permissions)."""


def is_write_failure(err: BaseException) -> bool:
    """An OS error, or torch.save's writer reporting one."""
    return isinstance(err, OSError) or (isinstance(err, RuntimeError) and any(s in str(err) for s in _TORCH_WRITE_FAILURES))


def is_disk_full(err: BaseException) -> bool:
    """The OS said the disk (or the user's quota) is full."""
    return getattr(err, "errno", None) in (errno.ENOSPC, errno.EDQUOT)


def write_failure(path: Path, err: BaseException, needed: int | None = None, what: str = "") -> str:
    """One line on why writing `path` failed: `cannot write [what ]PATH: disk full (N bytes needed, M free)`
    when the disk is full (or has fewer bytes free than `needed`), else the OS's reason."""
    try:
        free: int | None = shutil.disk_usage(path.parent).free
    except OSError:
        free = None
    name = f"{what} {path}" if what else str(path)
    full = is_disk_full(err) or (needed is not None and free is not None and free < needed)
    if full:
        sizes = [f"{needed:,} bytes needed"] if needed is not None else []
        sizes += [f"{free:,} free"] if free is not None else []
        return f"cannot write {name}: disk full" + (f" ({', '.join(sizes)})" if sizes else "")
    reason = err.strerror if isinstance(err, OSError) and err.strerror else " ".join(str(err).split())[:200]
    return f"cannot write {name}: {reason}"


@contextmanager
def atomic_write(path: str | Path, needed: Callable[[], int] | None = None, what: str = "") -> Iterator[Path]:
    """`with atomic_write(path) as tmp:` write tmp; it then replaces `path`. A failure inside the
    block or in the rename removes tmp; a failed write raises WriteError (see `write_failure`;
    `needed()` gives the bytes the file needs, asked only on failure), anything else propagates
    (an interrupt, a bug)."""
    path = Path(path)
    tmp = path.parent / f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        yield tmp
        os.replace(tmp, path)
    except BaseException as err:
        with contextlib.suppress(OSError):  # (its folder may be what could not be made)
            tmp.unlink(missing_ok=True)
        if is_write_failure(err):
            raise WriteError(write_failure(path, err, needed() if needed is not None else None, what)) from err
        raise


def write_text_atomic(path: str | Path, text: str) -> None:
    """Writes `text` to `path` whole or not at all (flushed to the disk before the rename)."""
    with atomic_write(path) as tmp, open(tmp, "w") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())


def copy_file(source: Path, target: Path) -> None:
    """Copies `source` to `target` whole or not at all (WriteError on failure)."""
    with atomic_write(target) as tmp:
        shutil.copyfile(source, tmp)


def save_figure(fig: Any, path: str | Path, dpi: int) -> Path:
    """Lays out a matplotlib figure and saves it at `path` (the format by its suffix, PNG without one)
    whole or not at all (WriteError on failure); the figure is closed either way."""
    import matplotlib.pyplot as plt

    path = Path(path)
    try:
        fig.tight_layout()
        with atomic_write(path) as tmp:
            fig.savefig(tmp, dpi=dpi, format=path.suffix.lstrip(".") or "png")
    finally:
        plt.close(fig)
    return path
