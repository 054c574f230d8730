"""The commands behind BENCHMARKS.md's figures (docs/bench/**, scripts/) run on any checkout: no path of
one developer's machine in them, every shell script parses and every Python script compiles."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = sorted(p for d in ("docs", "scripts") for ext in ("*.sh", "*.py") for p in (ROOT / d).rglob(ext))
# an absolute path into someone's home or work tree; /tmp and the like are fine
MACHINE_PATH = re.compile(r"(?<![\w.$}/-])/(work|home|root|Users|mnt)/")


def test_there_are_record_scripts_to_check():
    assert len(SCRIPTS) > 20
    assert MACHINE_PATH.search("cd /work/main && bash x.sh")
    assert MACHINE_PATH.search('R="/home/me/runs"')
    assert not MACHINE_PATH.search("R=${1:?usage} && cp /tmp/wh/x . && ls $HOME/work/x ./work/y")


def test_no_record_script_names_a_path_of_one_machine():
    found = [f"{p.relative_to(ROOT)}:{n}: {line.strip()}" for p in SCRIPTS
             for n, line in enumerate(p.read_text().splitlines(), 1) if MACHINE_PATH.search(line)]
    assert not found, "\n".join(found)


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")
def test_every_shell_script_parses():
    bad = {}
    for p in SCRIPTS:
        if p.suffix == ".sh":
            r = subprocess.run(["bash", "-n", str(p)], capture_output=True, text=True)
            if r.returncode != 0:
                bad[str(p.relative_to(ROOT))] = r.stderr.strip()
    assert not bad, bad


def test_every_python_script_compiles():
    bad = {}
    for p in SCRIPTS:
        if p.suffix == ".py":
            try:
                compile(p.read_text(), str(p), "exec")
            except SyntaxError as e:
                bad[str(p.relative_to(ROOT))] = str(e)
    assert not bad, bad
