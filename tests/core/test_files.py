"""Files written whole or not at all: a failed write names the file (a full disk with the bytes free and
needed), leaves the previous file as it was and no temporary file behind."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
from collections import namedtuple

import pytest

from canter.core import files
from canter.core.files import (
    WriteError,
    atomic_write,
    copy_file,
    remove_stale_scratch,
    save_figure,
    scratch_folder,
    write_failure,
    write_text_atomic,
)

_Usage = namedtuple("_Usage", "total used free")


@pytest.fixture
def hundred_bytes_free(monkeypatch):
    monkeypatch.setattr(shutil, "disk_usage", lambda _: _Usage(10**9, 10**9 - 100, 100))


def _fail_with(error: BaseException):
    def write(path) -> None:
        with open(path, "w") as handle:
            handle.write("half a fi")
        raise error

    return write


def test_a_full_disk_keeps_the_previous_file_and_says_so_with_the_bytes_free(tmp_path, hundred_bytes_free):
    path = tmp_path / "progress.csv"
    write_text_atomic(path, "iteration\n1\n")
    with pytest.raises(WriteError) as caught, atomic_write(path) as tmp:
        _fail_with(OSError(errno.ENOSPC, "No space left on device"))(tmp)
    assert str(caught.value) == f"cannot write {path}: disk full (100 free)"
    assert path.read_text() == "iteration\n1\n" and [p.name for p in tmp_path.iterdir()] == ["progress.csv"]


def test_the_bytes_needed_are_asked_for_only_on_failure_and_name_a_full_disk_the_os_did_not(tmp_path, hundred_bytes_free):
    asked = []

    def needed() -> int:
        asked.append(1)
        return 4000

    with atomic_write(tmp_path / "ok.pt", needed=needed) as tmp:
        tmp.write_bytes(b"x")
    assert asked == [] and (tmp_path / "ok.pt").read_bytes() == b"x"
    # torch.save's writer reports a full disk as a RuntimeError: fewer bytes free than needed says which
    with pytest.raises(WriteError) as caught, atomic_write(tmp_path / "c.pt", needed=needed, what="checkpoint") as tmp:
        _fail_with(RuntimeError("PytorchStreamWriter failed writing file data/0: file write failed"))(tmp)
    assert str(caught.value) == f"cannot write checkpoint {tmp_path / 'c.pt'}: disk full (4,000 bytes needed, 100 free)"
    assert [p.name for p in tmp_path.iterdir()] == ["ok.pt"]


def test_other_os_errors_give_their_reason_and_anything_else_propagates_as_it_is(tmp_path):
    with pytest.raises(WriteError, match=r"^cannot write .*a\.json: Permission denied$"), atomic_write(tmp_path / "a.json") as tmp:
        _fail_with(PermissionError(errno.EACCES, "Permission denied"))(tmp)
    for error in (KeyboardInterrupt(), ValueError("a bug")):
        with pytest.raises(type(error)), atomic_write(tmp_path / "a.json") as tmp:
            _fail_with(error)(tmp)
    assert list(tmp_path.iterdir()) == []
    blocked = tmp_path / "a_file"
    blocked.write_text("")
    with pytest.raises(WriteError, match=r"^cannot write .*a_file/x\.json: "):  # its folder cannot be made
        write_text_atomic(blocked / "x.json", "{}")


def test_a_failed_rename_is_a_failed_write(tmp_path, monkeypatch, hundred_bytes_free):
    path = tmp_path / "r.json"
    write_text_atomic(path, "{}")

    def full(src, dst):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(files.os, "replace", full)
    with pytest.raises(WriteError, match=r"^cannot write .*r\.json: disk full \(100 free\)$"):
        write_text_atomic(path, '{"a": 1}')
    assert path.read_text() == "{}" and [p.name for p in tmp_path.iterdir()] == ["r.json"]


def test_write_failure_without_a_readable_disk_names_the_reason(tmp_path, monkeypatch):
    def unreadable(_):
        raise OSError(errno.EIO, "I/O error")

    monkeypatch.setattr(shutil, "disk_usage", unreadable)
    assert write_failure(tmp_path / "f", OSError(errno.ENOSPC, "No space left on device")) == f"cannot write {tmp_path / 'f'}: disk full"
    assert write_failure(tmp_path / "f", OSError(errno.EROFS, "Read-only file system")) == f"cannot write {tmp_path / 'f'}: Read-only file system"


def test_copy_file_is_whole_or_nothing(tmp_path, monkeypatch, hundred_bytes_free):
    source = tmp_path / "checkpoint.pt"
    source.write_bytes(b"weights")
    copy_file(source, tmp_path / "snapshots" / "it2.pt")
    assert (tmp_path / "snapshots" / "it2.pt").read_bytes() == b"weights"

    def full(src, dst):
        _fail_with(OSError(errno.ENOSPC, "No space left on device"))(dst)

    monkeypatch.setattr(files.shutil, "copyfile", full)
    with pytest.raises(WriteError, match=r"it4\.pt: disk full \(100 free\)$"):
        copy_file(source, tmp_path / "snapshots" / "it4.pt")
    assert sorted(p.name for p in (tmp_path / "snapshots").iterdir()) == ["it2.pt"]


def test_save_figure_writes_a_png_or_names_the_file_and_closes_the_figure_either_way(tmp_path, monkeypatch, hundred_bytes_free):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path = tmp_path / "curve.png"
    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    save_figure(fig, path, dpi=50)
    before = path.read_bytes()
    assert before[:4] == b"\x89PNG" and fig.number not in plt.get_fignums()
    fig, ax = plt.subplots()
    monkeypatch.setattr(fig, "savefig", lambda target, **_: _fail_with(OSError(errno.ENOSPC, "No space left on device"))(target))
    with pytest.raises(WriteError, match=r"curve\.png: disk full \(100 free\)$"):
        save_figure(fig, path, dpi=50)
    assert path.read_bytes() == before and fig.number not in plt.get_fignums() and [p.name for p in tmp_path.iterdir()] == ["curve.png"]


@pytest.fixture
def dead_and_live_pids():
    """(a pid whose process has ended, a pid whose process runs)."""
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    try:
        yield dead.pid, live.pid
    finally:
        live.kill()
        live.wait()


def test_the_scratch_of_a_killed_writer_goes_and_a_live_writers_stays(tmp_path, dead_and_live_pids):
    """`remove_stale_scratch(path, kinds)` removes the scratch files and folders of `path` of the given kinds
    whose writer is gone (kill -9 leaves them), and nothing else: not a live writer's, not another kind's,
    not another file's (even one whose name starts with this one's), not a user's hidden file."""
    dead, live = dead_and_live_pids
    target = tmp_path / "v.mp4"
    names = {
        "dead video": f".v.mp4.{dead}.0a1b2c3d.partial.mp4",
        "dead folder": f".v.mp4.{dead}.0a1b2c3d.parts",
        "live video": f".v.mp4.{live}.0a1b2c3d.partial.mp4",
        "dead tmp": f".v.mp4.{dead}.0a1b2c3d.tmp",  # another kind: not asked for
        "other file": f".v.mp4.json.{dead}.0a1b2c3d.partial.mp4",
        "user": ".v.mp4.notes",
        "pid-less tmp": ".v.mp4.k2j4_x9q.tmp",  # an earlier version's temporary file: only with kind .tmp
    }
    for key, name in names.items():
        if key == "dead folder":
            (tmp_path / name).mkdir()
            (tmp_path / name / "part.onnx").write_bytes(b"half")
        else:
            (tmp_path / name).write_bytes(b"half")
    removed = remove_stale_scratch(target, (".partial.mp4", ".parts"))
    assert sorted(p.name for p in removed) == sorted([names["dead video"], names["dead folder"]])
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        names[k] for k in ("live video", "dead tmp", "other file", "user", "pid-less tmp"))
    # the default kind: .tmp
    assert sorted(p.name for p in remove_stale_scratch(target)) == sorted([names["dead tmp"], names["pid-less tmp"]])


def test_a_scratch_folder_goes_however_its_block_ends_and_clears_a_killed_writers(tmp_path, dead_and_live_pids):
    dead, live = dead_and_live_pids
    target = tmp_path / "policy.onnx"
    stale, running = tmp_path / f".policy.onnx.{dead}.00ff00ff.parts", tmp_path / f".policy.onnx.{live}.00ff00ff.parts"
    for folder in (stale, running):
        folder.mkdir()
        (folder / "policy.onnx").write_bytes(b"half")
    with pytest.raises(KeyboardInterrupt), scratch_folder(target) as folder:
        assert folder.parent == tmp_path and folder.name.startswith(f".policy.onnx.{os.getpid()}.")
        (folder / "policy.onnx").write_bytes(b"half")
        assert not stale.exists() and running.exists()
        raise KeyboardInterrupt
    assert sorted(p.name for p in tmp_path.iterdir()) == [running.name]
