"""bench latency: every backend is timed for the MLP and the GRU, and the report files are written."""

from __future__ import annotations

import pytest

from canter.bench.latency import LatencyCfg, markdown_table, plot_latency, run_latency_bench
from canter.core.errors import ConfigError

BACKENDS = ["onnxruntime fp32", "onnxruntime int8", "canter runtime fp32 (raw terms)", "torchscript fp32",
            "torchscript int8", "torch eager fp32", "torch eager int8"]


def test_latency_rows_cover_every_backend_for_both_policies(tmp_path):
    result = run_latency_bench(LatencyCfg(iterations=20, warmup=2, rounds=2, gru_hidden_dim=32))
    assert [(r.policy, r.backend) for r in result.rows] == [(p, b) for p in ("mlp", "gru") for b in BACKENDS]
    for row in result.rows:
        assert row.calls == 20
        assert 0 < row.p50_us <= row.p99_us <= row.max_us
    assert result.networks["mlp"]["actor_hidden_dims"] == [256, 128, 64]  # the dog's agent config
    assert result.networks["mlp"]["obs_dim"] == 48 and result.networks["gru"]["rnn"]["hidden_dim"] == 32
    assert result.to_json()["rows"][0]["backend"] == "onnxruntime fp32"  # the report's layout
    table = markdown_table(result)
    assert table.count("\n") == 2 + len(result.rows)
    plot_latency(result, tmp_path / "latency.png")
    assert (tmp_path / "latency.png").stat().st_size > 10_000


@pytest.mark.parametrize(("task", "images", "obs_dim"), [("atari-pong", {"policy": [4, 84, 84]}, 0),
                                                          ("arm-grasp", {"wrist": [3, 64, 64]}, 25)])
def test_latency_of_policies_that_read_images(task, images, obs_dim):
    """A game's CNN (frames only, no vector input) and a wrist camera's CNN beside the arm's state: every
    backend is fed the env's first frames, in the dtype the env emits."""
    result = run_latency_bench(LatencyCfg(task=task, iterations=4, warmup=1, rounds=2, gru_hidden_dim=16))
    assert [(r.policy, r.backend) for r in result.rows] == [(p, b) for p in ("mlp", "gru") for b in BACKENDS]
    assert all(0 < row.p50_us <= row.max_us and row.calls == 4 for row in result.rows)
    network = result.networks["mlp"]
    assert network["images"] == images and network["obs_dim"] == obs_dim and network["cnn"] is not None


def test_bad_latency_settings_name_the_flag():
    with pytest.raises(ConfigError, match="--iterations must be >= --rounds"):
        LatencyCfg(iterations=2, rounds=5)
