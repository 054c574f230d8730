"""Atomic checkpoint files: a failed write (a full disk) keeps the previous file and says why in one
line; temporary files of killed writers go at the next start."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
from collections import namedtuple

import pytest
import torch

from canter.core.errors import CanterError
from canter.rl import checkpoint
from canter.rl.checkpoint import load_checkpoint, remove_stale_temps, save_atomic

PAYLOAD = {"algorithm": {"x": torch.zeros(1000)}, "iteration": 2}  # 4,000 bytes of tensors


def _failing_save(error: BaseException):
    def save(obj, file):
        file.write(b"partial")
        raise error

    return save


@pytest.mark.parametrize("error", [
    RuntimeError("[enforce fail at inline_container.cc:672] . unexpected pos 64 vs 7"),
    RuntimeError("PytorchStreamWriter failed writing file data/0: file write failed"),
    OSError(errno.ENOSPC, "No space left on device"),
])
def test_a_full_disk_keeps_the_previous_checkpoint_and_says_disk_full(tmp_path, monkeypatch, error):
    path = tmp_path / "checkpoint.pt"
    save_atomic({"algorithm": {"x": torch.ones(3)}, "iteration": 1}, path)
    monkeypatch.setattr(torch, "save", _failing_save(error))
    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda _: usage(10**9, 10**9 - 100, 100))  # 100 bytes free
    with pytest.raises(CanterError) as caught:
        save_atomic(PAYLOAD, path)
    assert str(caught.value) == f"cannot write checkpoint {path}: disk full (4,000 bytes needed, 100 free)"
    monkeypatch.undo()
    assert load_checkpoint(path)["iteration"] == 1
    assert [p.name for p in tmp_path.iterdir()] == ["checkpoint.pt"]  # the partial file is gone


def test_other_write_failures_name_the_file_and_the_reason(tmp_path, monkeypatch):
    monkeypatch.setattr(torch, "save", _failing_save(PermissionError(errno.EACCES, "Permission denied")))
    with pytest.raises(CanterError, match=r"^cannot write checkpoint .*checkpoint.pt: Permission denied$"):
        save_atomic(PAYLOAD, tmp_path / "checkpoint.pt")
    assert list(tmp_path.iterdir()) == []


def test_an_interrupt_mid_write_removes_the_temporary_file_and_propagates(tmp_path, monkeypatch):
    monkeypatch.setattr(torch, "save", _failing_save(KeyboardInterrupt()))
    with pytest.raises(KeyboardInterrupt):
        save_atomic(PAYLOAD, tmp_path / "checkpoint.pt")
    assert list(tmp_path.iterdir()) == []


def test_stale_temporary_files_of_dead_writers_are_removed(tmp_path):
    """A writer killed mid-write leaves `.checkpoint.pt.<pid>.<random>.tmp`; the next start removes
    those whose process is gone (and the pid-less names of earlier versions), not a live writer's."""
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    try:
        names = {
            "dead": f".checkpoint.pt.{dead.pid}.0a1b2c3d.tmp",
            "live": f".checkpoint.pt.{live.pid}.0a1b2c3d.tmp",
            "mine": f".checkpoint.pt.{os.getpid()}.0a1b2c3d.tmp",  # this process is not writing now
            "old": ".checkpoint.pt.k2j4_x9q.tmp",
            "csv": f".progress.csv.{dead.pid}.0a1b2c3d.tmp",
            "user": ".notes.tmp",
        }
        for name in names.values():
            (tmp_path / name).write_bytes(b"partial")
        removed = remove_stale_temps(tmp_path, ("checkpoint.pt", "progress.csv"))
        assert sorted(p.name for p in removed) == sorted(names[k] for k in ("dead", "mine", "old", "csv"))
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted([names["live"], names["user"]])
    finally:
        live.kill()
        live.wait()


def test_a_write_names_its_temporary_file_after_its_process(tmp_path, monkeypatch):
    seen = []

    def save(obj, file):
        seen.append(os.path.basename(file.name))

    monkeypatch.setattr(torch, "save", save)
    save_atomic(PAYLOAD, tmp_path / "checkpoint.pt")
    assert seen[0].startswith(f".checkpoint.pt.{os.getpid()}.") and seen[0].endswith(".tmp")
    assert checkpoint.payload_bytes({"a": [torch.zeros(3), torch.zeros(2, dtype=torch.float64)], "b": 1}) == 28
