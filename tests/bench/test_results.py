"""Typed bench results: the report's flat JSON keys, and back."""

from __future__ import annotations

import pytest

from canter.bench.report import Spread
from canter.bench.train import FIGURES, TrainBenchResult


def _result(**extra) -> TrainBenchResult:
    spread = Spread.of([3.0, 1.0, 2.0])
    return TrainBenchResult(
        task="cartpole", nproc=2, num_envs=16, num_envs_per_process=8, backend="cpu", device="cpu", dist_backend="gloo",
        cores_per_process=1, sim_threads_per_process=1, rollout_torch_threads=1, learn_torch_threads=1,
        model_path="cartpole.xml", algo="ppo", num_steps_per_env=16, iterations=3, wall_time_s=1.5, env_steps=768,
        mean_return=0.5, step_fps=spread, step_inference_fps=spread, total_fps=spread, iteration_time_s=spread,
        machine={"cpu": "x", "commit": "abc"}, **extra)


def test_train_result_json_keeps_the_report_keys_and_reads_back():
    data = _result().to_json()
    assert data["step_fps"] == 2.0 and data["step_fps_min"] == 1.0 and data["total_fps_max"] == 3.0
    assert data["cpu"] == "x" and data["commit"] == "abc"  # machine facts at the top level, as before
    assert "profile_trace" not in data and "master_port" not in data and "machine" not in data
    assert {f"{key}_{end}" for key in FIGURES for end in ("min", "max")} <= set(data)
    assert TrainBenchResult.from_json(data) == _result()
    launched = _result(master_port=29500, profile_trace="t.json").to_json()
    assert launched["master_port"] == 29500 and launched["profile_trace"] == "t.json"


def test_gradsync_result_json_keeps_the_report_keys_and_reads_back():
    from canter.bench.gradsync import GradsyncResult

    result = GradsyncResult(task="ant", nproc=2, dist_backend="gloo", minibatch_size_per_process=512, num_parameters=10,
                            steps=5, repeats=2, none_ms=1.0, none_ms_all=[1.0, 1.5], flat_ms=2.0, flat_ms_all=[2.0, 2.5],
                            ddp_ms=3.0, ddp_ms_all=[3.0, 3.5], faster="flat", machine={"commit": "abc"})
    data = result.to_json()
    assert data["flat_ms"] == 2.0 and data["ddp_ms_all"] == [3.0, 3.5] and data["commit"] == "abc"
    assert GradsyncResult.from_json(data) == result


def test_gradsync_checks_its_train_options_before_any_rank_starts(monkeypatch):
    import canter.bench.gradsync as gradsync
    from canter.core.errors import CanterError

    def launched(*args, **kwargs):
        raise AssertionError("ranks were started before the options were checked")

    monkeypatch.setattr(gradsync, "launch", launched)
    with pytest.raises(CanterError, match="unrecognized options: --bogus-flag"):
        gradsync.run_gradsync_launched("ant", 5, 2, 2, ["--bogus-flag"])
