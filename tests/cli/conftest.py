"""Package-wide fixtures: one small dog-rough run, trained once and only read by the tests that use it
(the stairs evaluation, the blind student's teacher)."""

from __future__ import annotations

from pathlib import Path

import pytest

from canter.cli.main import main

from .test_train import SMALL


@pytest.fixture(scope="package")
def dog_rough_run(tmp_path_factory) -> Path:
    """A dog-rough run of one iteration (8 envs). Read-only: copy it before writing to it."""
    run = tmp_path_factory.mktemp("dog_rough") / "rough"
    assert main(["train", "dog-rough", "--run-dir", str(run), *SMALL, "--max-iterations", "1"]) == 0
    return run
