"""`canter bench qp` end to end on a small batch: every solver reaches the target accuracy."""

from __future__ import annotations

import json

import pytest

from canter.bench.qp import QpBenchCfg, random_stances, run_qp_bench
from canter.cli.main import main
from canter.control.qp import QPStatus, solve
from canter.core.errors import ConfigError

pytest.importorskip("osqp")
pytest.importorskip("proxsuite")


def test_random_stances_are_solvable():
    _, info = solve(*random_stances(64, seed=3))
    assert (info.status == QPStatus.SOLVED).all()


def test_bench_reaches_equal_accuracy(capsys):
    assert main(["bench", "qp", "--batch", "32", "--repeats", "1", "--threads", "1", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    for key in ("max_kkt_residual", "osqp_max_kkt_residual", "proxsuite_max_kkt_residual"):
        assert result[key] <= result["target_kkt"] == 1e-5
    for key in ("canter_problems_per_s", "osqp_loop_problems_per_s", "proxsuite_batch_problems_per_s"):
        assert result[key] > 0
    assert result["canter_solved"] == 32 and result["dtype"] == "float64" and result["batch"] == 32
    # the fused kernel and the torch path (the GPU code path) reach the same accuracy
    assert result["canter_kernel"] in ("fused", "torch") and result["canter_torch_max_kkt_residual"] <= 1e-5
    assert result["canter_torch_problems_per_s"] > 0
    assert result["speedup_vs_osqp_loop"] == pytest.approx(
        result["canter_problems_per_s"] / result["osqp_loop_problems_per_s"]
    )


def test_bad_config_is_one_line():
    with pytest.raises(ConfigError, match="method"):
        run_qp_bench(QpBenchCfg(batch=4, method="simplex"))
