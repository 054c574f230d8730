"""The run-directory lock: a second writer is refused with the holder's pid; kill -9 frees it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from canter.core.errors import CanterError
from canter.runs.lock import LOCK_FILE, RunLock

HOLD = """
import sys, time
from canter.runs.lock import RunLock
lock = RunLock(sys.argv[1]).acquire("canter train cartpole")
print("held", flush=True)
time.sleep(60)
"""


def _holder(run_dir) -> subprocess.Popen:
    process = subprocess.Popen([sys.executable, "-c", HOLD, str(run_dir)], stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None and process.stdout.readline().strip() == "held"
    return process


def test_a_second_process_is_told_who_holds_the_directory_until_the_holder_dies(tmp_path):
    holder = _holder(tmp_path)
    try:
        with pytest.raises(CanterError, match=rf"run directory {tmp_path} is in use by process {holder.pid} \(host "):
            RunLock(tmp_path).acquire("canter train --resume")
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    with RunLock(tmp_path).acquire("canter train --resume") as lock:  # kill -9 released it
        assert f'"pid": {os.getpid()}' in (tmp_path / LOCK_FILE).read_text()
        assert lock.path == tmp_path / LOCK_FILE


def test_release_lets_the_next_writer_in_and_a_read_only_directory_is_one_line(tmp_path, monkeypatch):
    RunLock(tmp_path).acquire("first").release()
    RunLock(tmp_path).acquire("second").release()

    def read_only(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr("canter.runs.lock.open", read_only, raising=False)
    with pytest.raises(CanterError, match=f"^cannot write to run directory {tmp_path}: Permission denied$"):
        RunLock(tmp_path).acquire("x")
