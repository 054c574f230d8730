"""Files written whole or not at all, and one line on why a write failed.

`atomic_write(path)` yields a temporary path beside `path` (`scratch_path`: `.<name>.<pid>.<random>.tmp`); when the
block ends normally the temporary file replaces `path` in one rename, so a reader never sees half a
file and a crash mid-write leaves the previous file as it was. A failed write (a full disk, a
folder that is not writable) removes the temporary file and raises a WriteError naming the file: a
full disk says so, with the bytes free (and needed, where the writer knows them). Checkpoints,
run files, progress.csv, the training curve and bench reports are all written this way.

A process killed outright (kill -9, power loss) cannot remove its scratch: `remove_stale_scratch(path)`
deletes the scratch of `path` whose writer is gone. Training does it for its run's files when it
starts, a video for its file, an export for its scratch folders.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from canter.core.errors import CanterError

SCRATCH_FOLDER = ".parts"  # the kind (suffix) of a scratch_folder's name

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
    tmp = scratch_path(path)
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


def scratch_path(path: Path, kind: str = ".tmp") -> Path:
    """A hidden name beside `path` for writing it: `.<name>.<pid>.<8 hex digits><kind>` (the pid lets
    `remove_stale_scratch` tell a dead writer's scratch from a live one's)."""
    return path.parent / f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}{kind}"


def remove_stale_scratch(path: Path, kinds: tuple[str, ...] = (".tmp",)) -> list[Path]:
    """Deletes the scratch files and folders of `path` (`scratch_path` names ending in one of `kinds`)
    whose writing process is gone, or is this one (which is not writing `path` now), and, of kind
    ".tmp", the pid-less `.<name>.<8 characters>.tmp` of versions that named them with tempfile; returns what went. A live
    writer's scratch stays; errors (a read-only folder) are ignored: a stale file is harmless."""
    ours = re.compile(rf"\.{re.escape(path.name)}\.(\d+)\.[0-9a-f]{{8}}(?:{'|'.join(map(re.escape, kinds))})")
    pidless = re.compile(rf"\.{re.escape(path.name)}\.[a-z0-9_]{{8}}\.tmp") if ".tmp" in kinds else None
    removed = []
    try:
        entries = [entry for entry in path.parent.iterdir() if entry.name.startswith(f".{path.name}.")]
    except OSError:
        return removed
    for entry in entries:
        match = ours.fullmatch(entry.name)
        if match is None and not (pidless is not None and pidless.fullmatch(entry.name)):
            continue
        pid = int(match[1]) if match is not None else None
        if pid is not None and pid != os.getpid() and _alive(pid):
            continue
        try:
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()
            removed.append(entry)
        except OSError:
            pass
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process
        return True
    return True


@contextmanager
def scratch_folder(path: Path) -> Iterator[Path]:
    """A hidden folder beside `path` (`scratch_path(path, ".parts")`) to make the files of `path` in;
    it goes, with what is left in it, when the block ends, however it ends. The scratch folders of
    `path` that a writer killed outright left go first (`remove_stale_scratch`)."""
    remove_stale_scratch(path, (SCRATCH_FOLDER,))
    folder = scratch_path(path, SCRATCH_FOLDER)
    folder.mkdir()
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


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
