"""Profiling ranges: a shared no-op when off; record_function ranges in torch.profiler when on."""

from __future__ import annotations

import pytest
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


def test_timing_adds_up_leaf_phases_only_and_restarts_on_take(monkeypatch):
    clock = iter([0.0, 1.0, 1.5, 4.0, 10.0, 10.25])
    monkeypatch.setattr(profiling.time, "perf_counter", lambda: next(clock))
    profiling.start_timing()
    try:
        with profiling.section("reward_observation"):  # a parent range: not a leaf, not timed
            with profiling.section("resets"):  # 0.0 -> 1.0
                pass
            with profiling.section("observations"):  # 1.5 -> 4.0
                pass
        first = profiling.take_timing()
        with profiling.section("resets"):  # 10.0 -> 10.25
            pass
        second = profiling.take_timing()
    finally:
        profiling.stop_timing()
    assert first["resets"] == 1.0 and first["observations"] == 2.5 and "reward_observation" not in first
    assert set(first) == set(profiling.PHASES)
    assert second["resets"] == 0.25 and second["observations"] == 0.0
    assert profiling.take_timing() == {}
    assert profiling.section("physics") is profiling.section("update")  # off again: the shared no-op


def test_bench_train_reports_where_an_iteration_goes():
    from canter.bench.train import run_train_bench

    result = run_train_bench("cartpole", 2.0, ["--num-envs", "32"])
    phases = result.phase_seconds
    assert set(phases) == {*profiling.PHASES, "other"}
    assert phases["physics"] > 0 and phases["update"] > 0 and phases["inference"] > 0
    # the phases and "other" make up the median iteration (medians of parts need not add up exactly)
    assert sum(phases.values()) >= 0.8 * result.iteration_time_s.median
    assert result.minibatch_steps == 5 * 4  # cartpole: 5 epochs of 4 minibatches


def test_measuring_turns_timing_and_ranges_off_however_the_block_ends():
    """A bench that failed or was stopped mid-run left timing (and --profile-dir's ranges) on for the
    rest of the process: every later section() was timed, not the shared no-op."""
    for ranges in (False, True):
        with pytest.raises(KeyboardInterrupt), profiling.measuring(ranges=ranges):
            assert profiling.enabled() == ranges
            with profiling.section("physics"):
                pass
            assert profiling.take_timing()["physics"] > 0.0
            raise KeyboardInterrupt
        assert not profiling.enabled() and profiling.take_timing() == {}
        assert profiling.section("physics") is profiling.section("update")
