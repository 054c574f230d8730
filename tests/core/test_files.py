"""Files written whole or not at all: a failed write names the file (a full disk with the bytes free and
needed), leaves the previous file as it was and no temporary file behind."""

from __future__ import annotations

import errno
import shutil
from collections import namedtuple

import pytest

from canter.core import files
from canter.core.files import (
    WriteError,
    atomic_write,
    copy_file,
    save_figure,
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
