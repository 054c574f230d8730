"""Module-wide fixtures: one small dog env and one policy per architecture (built once: envs cost ~1 s)."""

from __future__ import annotations

import pytest

from .helpers import ARCHITECTURES, dog_env, trained_looking_policy


@pytest.fixture(scope="package")
def env():
    return dog_env()


@pytest.fixture(scope="package")
def policies():
    """Built on an env of their own, so that their weights do not depend on which tests ran first."""
    source = dog_env()
    return {arch: trained_looking_policy(source, arch) for arch in ARCHITECTURES}
