"""Utilization logs of a benchmark: CPU use per process (psutil) and GPU use (NVML) as CSV files.

A background thread samples every `interval` seconds: each descendant of this process (torchrun's
ranks and its agent) — CPU percent as `top` shows it (100 = one core busy), resident memory,
threads, and the torch.distributed RANK from its environment — plus every core of the machine; and,
when NVML (package nvidia-ml-py) finds a GPU, each GPU's utilization, memory, temperature and power.
Without NVML or without a GPU the GPU log is skipped and the summary says why.
"""

from __future__ import annotations

import csv
import threading
import time
from pathlib import Path
from typing import Any

import psutil

from canter.core.files import atomic_write

CPU_FIELDS: tuple[str, ...] = ("time_s", "pid", "rank", "name", "cpu_percent", "rss_mib", "num_threads")
GPU_FIELDS: tuple[str, ...] = (
    "time_s",
    "gpu",
    "name",
    "utilization_percent",
    "memory_used_mib",
    "memory_total_mib",
    "temperature_c",
    "power_w",
)


def open_nvml() -> tuple[Any, list[Any], str | None]:
    """(pynvml module, device handles, None) when NVML sees a GPU; (None, [], reason) otherwise."""
    try:
        import pynvml  # type: ignore[import-not-found]
    except ImportError:
        return None, [], "nvidia-ml-py is not installed (pip install nvidia-ml-py)"
    try:
        pynvml.nvmlInit()
        count = pynvml.nvmlDeviceGetCount()
    except Exception as err:  # NVMLError_LibraryNotFound, _DriverNotLoaded, ...
        return None, [], f"NVML unavailable: {err}"
    if count == 0:
        return None, [], "NVML sees no GPU"
    return pynvml, [pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(count)], None


class UtilizationMonitor:
    """Samples CPU (and GPU) use into CSV files while a benchmark runs: `with monitor: ...`.

    cpu_csv: per-process and per-core rows (CPU_FIELDS). gpu_csv: per-GPU rows (GPU_FIELDS), written
    only when NVML sees a GPU. interval: seconds between samples.
    """

    def __init__(self, cpu_csv: Path, gpu_csv: Path, interval: float = 0.5):
        self.cpu_csv = Path(cpu_csv)
        self.gpu_csv = Path(gpu_csv)
        self.interval = float(interval)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="canter-monitor", daemon=True)
        self._processes: dict[int, psutil.Process] = {}
        self._ranks: dict[int, str] = {}
        self.cpu_rows: list[dict[str, Any]] = []
        self.gpu_rows: list[dict[str, Any]] = []
        self.gpu_skipped: str | None = None
        self._start = 0.0

    def __enter__(self) -> UtilizationMonitor:
        self._start = time.perf_counter()
        psutil.cpu_percent(percpu=True)  # the first call only starts the measurement
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._write()

    def _run(self) -> None:
        nvml, handles, self.gpu_skipped = open_nvml()
        try:
            while not self._stop.wait(self.interval):
                now = time.perf_counter() - self._start
                self._sample_cpu(now)
                if nvml is not None:
                    self._sample_gpu(nvml, handles, now)
        finally:
            if nvml is not None:
                nvml.nvmlShutdown()

    def _rank_of(self, process: psutil.Process) -> str:
        if process.pid not in self._ranks:
            try:
                self._ranks[process.pid] = process.environ().get("RANK", "")
            except (psutil.Error, OSError):
                self._ranks[process.pid] = ""
        return self._ranks[process.pid]

    def _sample_cpu(self, now: float) -> None:
        for child in psutil.Process().children(recursive=True):
            first = child.pid not in self._processes
            process = self._processes.setdefault(child.pid, child)
            try:
                with process.oneshot():
                    percent = process.cpu_percent(interval=None)  # since the previous sample
                    if first:  # the first call only starts this process's measurement
                        continue
                    row = {
                        "time_s": round(now, 3),
                        "pid": process.pid,
                        "rank": self._rank_of(process),
                        "name": process.name(),
                        "cpu_percent": percent,
                        "rss_mib": round(process.memory_info().rss / 2**20, 1),
                        "num_threads": process.num_threads(),
                    }
            except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
                continue
            self.cpu_rows.append(row)
        for core, percent in enumerate(psutil.cpu_percent(percpu=True)):
            self.cpu_rows.append(
                {
                    "time_s": round(now, 3),
                    "pid": 0,
                    "rank": "",
                    "name": f"cpu{core}",
                    "cpu_percent": percent,
                    "rss_mib": "",
                    "num_threads": "",
                }
            )

    def _sample_gpu(self, nvml: Any, handles: list[Any], now: float) -> None:
        for index, handle in enumerate(handles):
            try:
                utilization = nvml.nvmlDeviceGetUtilizationRates(handle)
                memory = nvml.nvmlDeviceGetMemoryInfo(handle)
                temperature = nvml.nvmlDeviceGetTemperature(handle, nvml.NVML_TEMPERATURE_GPU)
                power = nvml.nvmlDeviceGetPowerUsage(handle) / 1000.0
                name = nvml.nvmlDeviceGetName(handle)
            except Exception:  # a GPU that stops answering mid-run loses its sample, not the benchmark
                continue
            self.gpu_rows.append(
                {
                    "time_s": round(now, 3),
                    "gpu": index,
                    "name": str(name),
                    "utilization_percent": utilization.gpu,
                    "memory_used_mib": round(memory.used / 2**20, 1),
                    "memory_total_mib": round(memory.total / 2**20, 1),
                    "temperature_c": temperature,
                    "power_w": round(power, 1),
                }
            )

    def _write(self) -> None:
        with atomic_write(self.cpu_csv) as tmp, open(tmp, "w", newline="") as file:
            writer = csv.DictWriter(file, fieldnames=CPU_FIELDS)
            writer.writeheader()
            writer.writerows(self.cpu_rows)
        if self.gpu_skipped is None:
            with atomic_write(self.gpu_csv) as tmp, open(tmp, "w", newline="") as file:
                writer = csv.DictWriter(file, fieldnames=GPU_FIELDS)
                writer.writeheader()
                writer.writerows(self.gpu_rows)

    def summary(self) -> dict[str, Any]:
        """Mean CPU percent per rank and per core, mean GPU utilization and peak memory per GPU."""
        by_rank: dict[str, list[float]] = {}
        by_core: dict[str, list[float]] = {}
        for row in self.cpu_rows:
            if row["pid"] == 0:
                by_core.setdefault(row["name"], []).append(row["cpu_percent"])
            elif row["rank"] != "":
                by_rank.setdefault(row["rank"], []).append(row["cpu_percent"])
        out: dict[str, Any] = {
            "cpu_csv": str(self.cpu_csv),
            "cpu_percent_mean_by_rank": {rank: _mean(values) for rank, values in sorted(by_rank.items())},
            "cpu_percent_mean_by_core": {core: _mean(values) for core, values in sorted(by_core.items())},
            "gpu_csv": None if self.gpu_skipped else str(self.gpu_csv),
            "gpu_skipped": self.gpu_skipped,
        }
        if self.gpu_skipped is None:
            gpus = sorted({row["gpu"] for row in self.gpu_rows})
            out["gpu_utilization_mean"] = {
                g: _mean([r["utilization_percent"] for r in self.gpu_rows if r["gpu"] == g]) for g in gpus
            }
            out["gpu_memory_peak_mib"] = {
                g: max(r["memory_used_mib"] for r in self.gpu_rows if r["gpu"] == g) for g in gpus
            }
        return out


def _mean(values: list[float]) -> float:
    return round(sum(values) / len(values), 1) if values else float("nan")
