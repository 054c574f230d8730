"""retain_freed_memory: large tensors come from the heap (no mmap per allocation) when CANTER_MALLOC and
the policy ask for it."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from canter.core.errors import ConfigError
from canter.core.heap import retain_freed_memory

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc only")

# Runs in a fresh interpreter (mallopt is process-wide): glibc's count of bytes in mmapped blocks
# while a 64 MB tensor is alive, before and after retain_freed_memory.
PROBE = """
import ctypes, json, torch
from canter.core.heap import retain_freed_memory

class MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]

libc = ctypes.CDLL("libc.so.6")
libc.mallinfo2.restype = MallInfo2

def mmapped_while_alive():
    before = libc.mallinfo2().hblkhd
    tensor = torch.empty(64 << 20, dtype=torch.uint8)
    tensor.fill_(1)
    during = libc.mallinfo2().hblkhd
    del tensor
    return during - before

default = mmapped_while_alive()
took = retain_freed_memory(learns_from_images=True)
after = mmapped_while_alive()
print(json.dumps({"default": default, "took": took, "after": after}))
"""


def _probe(mode: str) -> dict:
    env = {**os.environ, "CANTER_MALLOC": mode}
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def test_large_tensors_stop_being_mmapped_once_retained():
    result = _probe("retain")
    assert result["default"] >= 64 << 20  # glibc's default: a block of its own, unmapped on free
    assert result["took"] is True
    assert result["after"] == 0  # from the heap, whose pages stay mapped for the next one


def test_canter_malloc_system_keeps_glibcs_defaults():
    result = _probe("system")
    assert result["took"] is False
    assert result["after"] >= 64 << 20


def test_auto_retains_only_for_policies_that_learn_from_images(monkeypatch):
    monkeypatch.setenv("CANTER_MALLOC", "auto")
    assert retain_freed_memory(learns_from_images=False) is False  # an MLP policy: glibc's defaults
    assert _probe("auto")["took"] is True and _probe("auto")["after"] == 0  # a CNN policy: retained


def test_a_bad_canter_malloc_is_a_config_error(monkeypatch):
    monkeypatch.setenv("CANTER_MALLOC", "jemalloc")
    with pytest.raises(ConfigError, match="CANTER_MALLOC='jemalloc'"):
        retain_freed_memory()


def test_the_cli_reports_a_bad_canter_malloc_in_one_line():
    env = {**os.environ, "CANTER_MALLOC": "fast"}
    done = subprocess.run([sys.executable, "-m", "canter", "list"], env=env, capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "canter: error: CANTER_MALLOC='fast': expected 'auto' (the default), 'retain' or 'system'"]
