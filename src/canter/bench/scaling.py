"""`canter bench scaling`: how training throughput scales with the number of processes.

For each process count K of the sweep, `canter bench train` runs on K ranks (torch.distributed,
started by torchrun's launcher on a free port found here) for the same wall time:
- strong scaling: a fixed total of `num_envs` envs split over the K processes;
- weak scaling: `num_envs` envs per process (K·num_envs in all).
speedup(K) = total FPS(K) / total FPS(K₀) and efficiency(K) = speedup(K) / (K/K₀), with K₀ the
smallest count of the sweep (1 in the usual sweep). Every process gets the same cores at every point
(`cores_per_process`: its MuJoCo threads and learning threads), so K processes have K times the
resources of one, as K GPUs have K times one GPU's. Written to --out: a markdown table in the layout
of seed 003's tables, a PNG of FPS and efficiency versus K, the JSON of every point, and per point
a CSV of CPU use per process (and of GPU use when NVML sees a GPU); with --profile, a
torch.profiler chrome trace per rank (and NVTX ranges on CUDA).
"""

from __future__ import annotations

import json
import shlex
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from canter.bench.monitor import UtilizationMonitor
from canter.bench.report import machine_info
from canter.bench.train import run_train_bench_launched
from canter.core.device import available_cores
from canter.core.errors import ConfigError
from canter.core.files import save_figure, write_text_atomic

Mode = Literal["strong", "weak"]


def parse_nprocs(text: str) -> list[int]:
    """ "1,2,4" -> [1, 2, 4] (sorted, distinct, each >= 1)."""
    try:
        counts = sorted({int(part) for part in text.split(",") if part.strip()})
    except ValueError as err:
        raise ConfigError(f"nprocs: expected comma-separated integers like 1,2,4, got {text!r}") from err
    if not counts or counts[0] < 1:
        raise ConfigError(f"nprocs: expected process counts >= 1, got {text!r}")
    return counts


def envs_for(mode: Mode, num_envs: int, nproc: int) -> int:
    """Total envs of a point: num_envs (strong, must split evenly) or nproc·num_envs (weak)."""
    if mode == "weak":
        return num_envs * nproc
    if num_envs % nproc:
        raise ConfigError(f"num_envs: strong scaling splits {num_envs} envs over {nproc} processes unevenly")
    return num_envs


@dataclass(kw_only=True)
class ScalingReport:
    """`canter bench scaling`: the sweep's settings and one point per process count (its FPS
    figures, speedup, efficiency, utilization summary and the rank-0 bench result), and the files
    written. to_json() is the report's JSON (what markdown_table and plot_scaling read)."""

    task: str
    mode: str
    num_envs: int
    seconds: float
    nprocs: list[int]
    cores_per_process: int
    command: str
    machine: dict[str, Any]
    backend: str
    device: str
    dist_backend: str | None
    points: list[dict[str, Any]]
    files: dict[str, str]

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def run_scaling(
    *,
    task: str,
    mode: Mode,
    nprocs: list[int],
    num_envs: int,
    seconds: float,
    out: Path,
    profile: bool = False,
    train_argv: list[str] | None = None,
    sample_interval: float = 0.5,
    cores_per_process: int = 0,
    command: str = "",
    log: Any = None,
) -> ScalingReport:
    """Runs the sweep and writes its files into `out`; returns the report (also saved as JSON).

    cores_per_process: threads of each process's MuJoCo pool and learning, the same at every point
    (0: this machine's cores divided by the largest process count), so that K processes use K times
    the cores of one — as K GPUs are K times one GPU.
    """
    cores_per_process = cores_per_process or max(1, available_cores() // max(nprocs))
    if not sample_interval > 0:
        raise ConfigError(f"--sample-interval: must be > 0 seconds, got {sample_interval:g}")
    if mode not in ("strong", "weak"):
        raise ConfigError(f"mode: {mode!r} is not one of 'strong', 'weak'")
    if num_envs < 1:
        raise ConfigError(f"num_envs: must be >= 1, got {num_envs}")
    totals = {nproc: envs_for(mode, num_envs, nproc) for nproc in nprocs}  # all checked before any run
    out.mkdir(parents=True, exist_ok=True)
    stem = f"scaling_{task}_{mode}"
    points: list[dict[str, Any]] = []
    for nproc in nprocs:
        if log is not None:
            log(f"{mode} scaling, {task}: {nproc} process(es), {totals[nproc]} envs, {seconds:g} s")
        monitor = UtilizationMonitor(
            out / f"{stem}_cpu_n{nproc}.csv", out / f"{stem}_gpu_n{nproc}.csv", sample_interval
        )
        profile_dir = str(out / f"{stem}_profile_n{nproc}") if profile else None
        with monitor:
            typed = run_train_bench_launched(task, seconds, ["--num-envs", str(totals[nproc]), *(train_argv or [])],
                                             nproc, profile_dir=profile_dir, cores_per_process=cores_per_process)
        result = typed.to_json()
        point = {key: result[key] for key in ("nproc", "num_envs", "num_envs_per_process", "step_fps",
                                              "step_inference_fps", "total_fps", "iteration_time_s")}
        point.update(utilization=monitor.summary(), bench=result)
        points.append(point)
    base = points[0]
    for point in points:
        point["speedup"] = point["total_fps"] / base["total_fps"]
        point["efficiency"] = point["speedup"] / (point["nproc"] / base["nproc"])
    files = {"markdown": out / f"{stem}.md", "plot": out / f"{stem}.png", "json": out / f"{stem}.json"}
    report = ScalingReport(task=task, mode=mode, num_envs=num_envs, seconds=seconds, nprocs=nprocs,
                           cores_per_process=cores_per_process, command=command, machine=machine_info(),
                           backend=base["bench"]["backend"], device=base["bench"]["device"],
                           dist_backend=points[-1]["bench"]["dist_backend"], points=points,
                           files={name: str(path) for name, path in files.items()})
    write_text_atomic(files["markdown"], markdown_table(report.to_json()))
    plot_scaling(report.to_json(), files["plot"])
    write_text_atomic(files["json"], json.dumps(report.to_json(), indent=2))
    return report


def markdown_table(report: dict[str, Any]) -> str:
    """Seed 003's table layout (processes, envs, FPS Step, Environment Step & Inference FPS,
    FPS Total, Per Epoch Time) plus envs per process, speedup and efficiency, under a header with
    the command, hardware and commit."""
    machine = report["machine"]
    lines = [
        f"### {report['mode'].capitalize()} scaling: {report['task']} "
        f"({'total' if report['mode'] == 'strong' else 'per process'}: {report['num_envs']} envs)",
        "",
        f"`{report['command']}`" if report["command"] else "",
        "",
        f"{machine['cpu']}, {machine['cores']} cores, GPU: {machine['gpu'] or 'none'}; torch {machine['torch']}, "
        f"MuJoCo {machine['mujoco']}; commit `{machine['commit']}`; physics backend {report['backend']}, "
        f"device {report['device']}, process group {report['dist_backend'] or '-'}; {report['cores_per_process']} "
        f"core(s) per process; {report['seconds']:g} s per point, medians over iterations after the first.",
        "",
        "| # processes | # envs | envs / process | FPS Step | Environment Step & Inference FPS | FPS Total "
        "| Per Epoch Time (s) | speedup | efficiency |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for p in report["points"]:
        lines.append(
            f"| {p['nproc']} | {p['num_envs']} | {p['num_envs_per_process']} | {p['step_fps']:,.0f} "
            f"| {p['step_inference_fps']:,.0f} | {p['total_fps']:,.0f} | {p['iteration_time_s']:.3f} "
            f"| {p['speedup']:.2f} | {p['efficiency']:.0%} |"
        )
    return "\n".join(lines) + "\n"


def plot_scaling(report: dict[str, Any], path: Path) -> None:
    """Left: the three FPS figures and ideal linear total FPS versus processes; right: efficiency."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    points = report["points"]
    nprocs = [p["nproc"] for p in points]
    base = points[0]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    for key, label in (
        ("step_fps", "FPS step"),
        ("step_inference_fps", "step + inference"),
        ("total_fps", "FPS total"),
    ):
        left.plot(nprocs, [p[key] for p in points], marker="o", label=label)
    left.plot(
        nprocs,
        [base["total_fps"] * n / base["nproc"] for n in nprocs],
        "k--",
        alpha=0.5,
        label="ideal (total)",
    )
    left.set(xlabel="processes", ylabel="env steps / s (all processes)", title="throughput", xticks=nprocs)
    left.legend()
    right.plot(nprocs, [100 * p["efficiency"] for p in points], marker="o", color="tab:red")
    right.axhline(100, color="k", ls="--", alpha=0.5)
    right.axhline(90, color="tab:gray", ls=":", label="90 %")
    right.set(
        xlabel="processes",
        ylabel="efficiency (%)",
        title=f"{report['mode']} scaling efficiency",
        xticks=nprocs,
        ylim=(0, max(110, 10 + max(100 * p["efficiency"] for p in points))),
    )
    right.legend()
    for ax in (left, right):
        ax.grid(alpha=0.3)
    machine = report["machine"]
    fig.suptitle(
        f"{report['task']}, {report['mode']} scaling, {report['num_envs']} envs "
        f"{'in all' if report['mode'] == 'strong' else 'per process'} — {machine['cpu']}, {machine['cores']} cores"
    )
    save_figure(fig, path, dpi=100)


def command_line(argv: list[str]) -> str:
    """The command as a person would type it."""
    return "canter bench scaling " + shlex.join(argv)
