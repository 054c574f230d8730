"""Profiling ranges: a shared no-op when off; record_function ranges in torch.profiler when on."""

from __future__ import annotations

import torch
from torch.profiler import ProfilerActivity, profile

from canter.core import profiling


def test_sections_are_a_shared_no_op_until_enabled_then_show_in_the_profiler():
    profiling.disable()
    assert profiling.section("physics") is profiling.section("update")
    try:
        profiling.enable()
        assert profiling.enabled()
        with profile(activities=[ProfilerActivity.CPU]) as profiler:
            with profiling.section("physics"):
                torch.ones(8).sum()
            with profiling.section("update"):
                torch.ones(8).sum()
        names = {event.name for event in profiler.events()}
        assert {"physics", "update"} <= names
    finally:
        profiling.disable()
    assert not profiling.enabled()
