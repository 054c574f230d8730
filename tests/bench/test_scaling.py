"""`canter bench scaling`: a tiny real sweep over 1 and 2 processes, and the table arithmetic."""

from __future__ import annotations

import json
import math

import pytest
import torch

from canter.bench.scaling import envs_for, markdown_table, parse_nprocs, run_scaling
from canter.core.errors import ConfigError


def test_nprocs_and_env_counts_of_strong_and_weak_scaling():
    assert parse_nprocs("4,1, 2,2") == [1, 2, 4]
    with pytest.raises(ConfigError, match="nprocs"):
        parse_nprocs("1,two")
    with pytest.raises(ConfigError, match="nprocs"):
        parse_nprocs("0,1")
    assert [envs_for("strong", 1024, n) for n in (1, 2, 4)] == [1024, 1024, 1024]
    assert [envs_for("weak", 1024, n) for n in (1, 2, 4)] == [1024, 2048, 4096]
    with pytest.raises(ConfigError, match="unevenly"):
        envs_for("strong", 1000, 3)


def test_markdown_table_has_seed_003_columns_and_the_efficiency():
    machine = {"cpu": "Test CPU", "cores": 2, "gpu": None, "torch": "2", "mujoco": "4", "commit": "abc1234"}
    points = [
        {"nproc": 1, "num_envs": 512, "num_envs_per_process": 512, "step_fps": 20000.0, "step_inference_fps": 18000.0,
         "total_fps": 10000.0, "iteration_time_s": 3.2768, "speedup": 1.0, "efficiency": 1.0},
        {"nproc": 2, "num_envs": 1024, "num_envs_per_process": 512, "step_fps": 39000.0, "step_inference_fps": 35000.0,
         "total_fps": 19000.0, "iteration_time_s": 3.449, "speedup": 1.9, "efficiency": 0.95},
    ]
    report = {"task": "ant", "mode": "weak", "num_envs": 512, "seconds": 60.0, "command": "canter bench scaling",
              "machine": machine, "backend": "cpu", "device": "cpu", "dist_backend": "gloo", "points": points,
              "cores_per_process": 1}
    lines = markdown_table(report).splitlines()
    header = lines.index(next(line for line in lines if line.startswith("| # processes")))
    assert "FPS Step | Environment Step & Inference FPS | FPS Total | Per Epoch Time (s)" in lines[header]
    assert lines[header + 2] == "| 1 | 512 | 512 | 20,000 | 18,000 | 10,000 | 3.277 | 1.00 | 100% |"
    assert lines[header + 3] == "| 2 | 1024 | 512 | 39,000 | 35,000 | 19,000 | 3.449 | 1.90 | 95% |"
    assert "abc1234" in lines[header - 2] and "1 core(s) per process" in lines[header - 2]


@pytest.mark.skipif(not torch.distributed.is_gloo_available(), reason="needs torch.distributed with gloo")
def test_tiny_weak_scaling_sweep_writes_table_plot_json_utilization_and_traces(tmp_path):
    report = run_scaling(task="cartpole", mode="weak", nprocs=[1, 2], num_envs=16, seconds=0.5, out=tmp_path,
                         profile=True, sample_interval=0.2, command="canter bench scaling --task cartpole").to_json()
    points = report["points"]
    assert [p["nproc"] for p in points] == [1, 2]
    assert [p["num_envs"] for p in points] == [16, 32] and [p["num_envs_per_process"] for p in points] == [16, 16]
    assert points[1]["bench"]["dist_backend"] == "gloo" and points[0]["bench"]["dist_backend"] is None
    # every process gets the same cores at every point: the machine's cores / the largest count
    assert report["cores_per_process"] == max(1, points[0]["bench"]["cores"] // 2)
    assert [p["bench"]["sim_threads_per_process"] for p in points] == [report["cores_per_process"]] * 2
    assert [p["bench"]["learn_torch_threads"] for p in points] == [report["cores_per_process"]] * 2
    for p in points:
        assert p["total_fps"] > 0 and p["total_fps"] <= p["step_inference_fps"] <= p["step_fps"]
        assert math.isclose(p["efficiency"], p["total_fps"] / points[0]["total_fps"] / p["nproc"])
    saved = json.loads((tmp_path / "scaling_cartpole_weak.json").read_text())
    assert [(p["nproc"], p["total_fps"], p["efficiency"]) for p in saved["points"]] == [
        (p["nproc"], p["total_fps"], p["efficiency"]) for p in points
    ]
    assert (tmp_path / "scaling_cartpole_weak.png").stat().st_size > 0
    table = (tmp_path / "scaling_cartpole_weak.md").read_text()
    assert table.count("\n| 1 | 16 | 16 |") == 1 and table.count("\n| 2 | 32 | 16 |") == 1
    # CPU use of both ranks was sampled; no GPU here, so its log is skipped with a reason
    cpu = (tmp_path / "scaling_cartpole_weak_cpu_n2.csv").read_text().splitlines()
    assert cpu[0] == "time_s,pid,rank,name,cpu_percent,rss_mib,num_threads"
    ranks = {line.split(",")[2] for line in cpu[1:]}
    assert {"0", "1"} <= ranks
    if not torch.cuda.is_available():
        assert points[1]["utilization"]["gpu_skipped"]
    # one chrome trace per rank, with the marked phases
    for rank in (0, 1):
        trace = (tmp_path / "scaling_cartpole_weak_profile_n2" / f"trace_rank{rank}.json").read_text()
        assert all(f'"{name}"' in trace for name in ("physics", "reward_observation", "inference", "update"))
