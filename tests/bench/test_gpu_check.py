"""scripts/gpu_check.sh in its no-CUDA mode (as CI runs it): it runs what needs no CUDA from the source
tree without an install, says what it skipped and why, and writes its table, JSON and PNG."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(torch.cuda.is_available(), reason="the no-CUDA mode; the GPU machine runs the full check")
def test_gpu_check_without_cuda_runs_the_rest_and_names_what_it_skipped(tmp_path):
    out = tmp_path / "check"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHON"] = sys.executable
    done = subprocess.run(
        ["bash", str(ROOT / "scripts" / "gpu_check.sh"), str(out), "--tasks", "cartpole", "--stages", "tests", "syncs", "parity",
         "env", "train", "learn", "--env-seconds", "0.2", "--env-repeats", "1", "--train-seconds", "2",
         "--fallback-envs", "32"],
        capture_output=True, text=True, timeout=600, env=env, cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads((out / "gpu_check.json").read_text())
    assert report["cuda"] is False
    status = {(r["stage"], r["name"]): r for r in report["records"]}
    assert status[("tests", "pytest-gpu")]["status"] == "ok"
    assert status[("tests", "pytest-gpu")]["result"].get("skipped", 0) >= 1  # the gpu tests skip themselves
    assert status[("tests", "pytest-gpu")]["result"].get("failed", 0) == 0
    for task in ("cartpole", "ant", "dog-flat", "dog-rough", "arm-grasp-state", "arm-grasp"):
        assert status[("parity", task)]["status"] == "skipped"
        assert "no CUDA" in status[("parity", task)]["reason"]
    assert status[("learn", "dog-flat")]["status"] == "skipped"
    assert status[("syncs", "cartpole")]["status"] == "skipped"
    env_result = status[("env", "cartpole-32")]["result"]
    assert env_result["backend"] == "cpu" and env_result["num_envs"] == 32 and env_result["env_steps_per_s"] > 0
    train_result = status[("train", "cartpole-32")]["result"]
    assert train_result["iterations"] >= 2 and train_result["total_fps"] > 0
    table = (out / "gpu_check.md").read_text()
    assert "**no CUDA**" in table and "| cartpole | 32 |" in table
    assert (out / "gpu_check.png").stat().st_size > 10_000
    assert "no CUDA" in done.stdout


def test_merge_refuses_reports_of_different_devices(tmp_path):
    from canter.bench.gpu import merge_reports
    from canter.core.errors import ConfigError

    for name, gpu in (("a", "H100"), ("b", "H200")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "gpu_check.json").write_text(json.dumps(
            {"device": {"gpu": gpu}, "config": {}, "cuda": True, "records": [], "seconds": 1.0}))
    with pytest.raises(ConfigError, match="different devices"):
        merge_reports([tmp_path / "a", tmp_path / "b"])
    merged = merge_reports([tmp_path / "a", tmp_path / "a"])
    assert merged["seconds"] == 2.0


def test_stages_run_in_the_order_given_and_the_report_is_written_as_they_go(tmp_path, monkeypatch):
    """On a short GPU lease the stages that matter most go first; every finished stage is in the
    report on disk before the next starts (a check cut off by its machine keeps its results)."""
    from canter.bench import gpu

    seen_on_disk = []
    real_learn = gpu._learn

    def learn_and_look(check, cfg):  # the learn stage runs after syncs here: syncs must be on disk
        seen_on_disk.append([r["stage"] for r in json.loads((tmp_path / "gpu_check.json").read_text())["records"]])
        real_learn(check, cfg)

    monkeypatch.setattr(gpu, "_cuda_available", lambda: False)
    monkeypatch.setattr(gpu, "_learn", learn_and_look)
    report = gpu.run_gpu_check(gpu.GpuCheckCfg(out=str(tmp_path), tasks=("cartpole", "ant"), stages=("syncs", "learn")))
    assert [(r["stage"], r["name"]) for r in report["records"]] == [("syncs", "cartpole"), ("syncs", "ant"),
                                                                     ("learn", "dog-flat")]
    assert seen_on_disk == []  # without CUDA the learn stage is a skip record, _learn is not called
    monkeypatch.setattr(gpu, "_cuda_available", lambda: True)
    monkeypatch.setattr(gpu._Check, "run", lambda self, stage, name, argv, limit, parse_json=True:
                        self._keep(gpu.StageRecord(stage=stage, name=name, status="failed", reason="not run")))
    report = gpu.run_gpu_check(gpu.GpuCheckCfg(out=str(tmp_path), tasks=("cartpole",), stages=("syncs", "learn"),
                                               learn_chunks=(1.0,)))
    assert seen_on_disk == [["syncs"]]
    assert [r["stage"] for r in report["records"]][:2] == ["syncs", "learn"]
    on_disk = json.loads((tmp_path / "gpu_check.json").read_text())
    assert [r["stage"] for r in on_disk["records"]] == [r["stage"] for r in report["records"]]


def test_the_parity_table_shows_the_rounding_spread_and_the_flag_picks_the_parity_tasks(tmp_path, monkeypatch):
    """Each parity row carries the CPU device's own rounding spread next to the fixed tolerance (a dash for
    a record from before the spread was measured), a '|' in a cell does not split the row, and
    `--parity-tasks` chooses which families the parity stage runs (a short lease runs one or two)."""
    from canter.bench import gpu
    from canter.cli.bench.gpu import GpuArgs

    parity = {"num_envs": 64, "steps": 1, "qpos_max_abs": 4.8e-7, "qvel_max_abs": 1.9e-5, "within": True,
              "tolerance": "qpos 0.0001 + 0.0001|q|, qvel 0.01 + 0.001|v|"}
    records = [{"stage": "parity", "name": "dog-flat", "status": "ok", "seconds": 52.0, "reason": "",
                "result": {**parity, "qpos_rounding_spread": 7.15e-7, "qvel_rounding_spread": 4.98e-5}},
               {"stage": "parity", "name": "cartpole", "status": "ok", "seconds": 30.0, "reason": "", "result": parity}]
    table = gpu.markdown_report({"device": {"gpu": "H200"}, "config": {}, "cuda": True, "records": records,
                                 "seconds": 82.0})
    rows = [line for line in table.splitlines() if line.startswith(("| dog-flat | 64", "| cartpole | 64"))]
    assert len(rows) == 2
    for row in rows:  # 8 cells: the escaped bars of the tolerance are not separators
        assert len(row.replace("\\|", "").strip("|").split(" | ")) == 8
    assert "| 7.2e-07, 5.0e-05 | True |" in rows[0] and "| - | True |" in rows[1]

    seen = {}

    def fake_check(cfg, progress=None):
        seen["cfg"] = cfg
        (tmp_path / "gpu_check.md").write_text("")
        return {"records": []}

    monkeypatch.setattr(gpu, "run_gpu_check", fake_check)
    assert GpuArgs(out=str(tmp_path), parity_tasks=("dog-flat", "cartpole")).run([]) == 0
    assert seen["cfg"].parity_tasks == ("dog-flat", "cartpole")
    assert GpuArgs(out=str(tmp_path)).parity_tasks == gpu.PARITY_TASKS and len(gpu.PARITY_TASKS) == 9


def test_parity_of_the_warp_cpu_device_with_itself_is_exact():
    """canter.bench.gpu_parity on the CPU device against itself (the GPU check compares it with CUDA):
    the copied state steps bitwise the same, nothing overflowed, and the report says so."""
    pytest.importorskip("mujoco_warp")
    from canter.bench.gpu_parity import warp_parity

    result = warp_parity("cartpole", num_envs=4, warmup=3, device="cpu")
    assert result["qpos_max_abs"] == 0.0 and result["qvel_max_abs"] == 0.0
    assert result["within"] and result["overflow_cpu"] == {} and result["overflow_cuda"] == {}
    # one float32 rounding of qpos moves the cartpole by about that much, no more
    assert 0.0 < result["qpos_rounding_spread"] < 1e-5 and 0.0 < result["qvel_rounding_spread"] < 1e-4
