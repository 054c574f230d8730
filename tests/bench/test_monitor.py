"""The utilization monitor samples the CPU use of child processes and skips GPUs cleanly."""

from __future__ import annotations

import subprocess
import sys

from canter.bench.monitor import UtilizationMonitor, open_nvml


def test_a_busy_child_shows_up_with_its_cpu_use(tmp_path):
    busy = "import time\nend = time.perf_counter() + 1.5\nwhile time.perf_counter() < end: pass\n"
    monitor = UtilizationMonitor(tmp_path / "cpu.csv", tmp_path / "gpu.csv", interval=0.2)
    with monitor:
        child = subprocess.Popen([sys.executable, "-c", busy], env={"RANK": "7", "PATH": ""})
        child.wait(timeout=60)
    rows = [row for row in monitor.cpu_rows if row["pid"] == child.pid]
    assert rows and all(row["rank"] == "7" for row in rows)
    assert max(row["cpu_percent"] for row in rows) > 0.0  # a spinning loop (how much depends on the machine's load)
    assert {row["name"] for row in monitor.cpu_rows if row["pid"] == 0} >= {"cpu0"}
    summary = monitor.summary()
    assert summary["cpu_percent_mean_by_rank"]["7"] > 0
    lines = (tmp_path / "cpu.csv").read_text().splitlines()
    assert lines[0] == "time_s,pid,rank,name,cpu_percent,rss_mib,num_threads" and len(lines) == len(monitor.cpu_rows) + 1


def test_gpu_log_is_written_only_when_nvml_sees_a_gpu(tmp_path):
    nvml, handles, reason = open_nvml()
    monitor = UtilizationMonitor(tmp_path / "cpu.csv", tmp_path / "gpu.csv", interval=0.1)
    with monitor:
        pass
    assert (tmp_path / "gpu.csv").exists() == (reason is None)
    assert monitor.summary()["gpu_skipped"] == reason
    if reason is not None:
        assert nvml is None and handles == []
