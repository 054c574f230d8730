"""`canter bench gpu` / scripts/gpu_check.sh: the one-command GPU check.

Stages, in the order `stages` gives them, each in its own process (a crash or a hang in one is recorded
and the next still runs; each gets a time limit, and stages past the check's deadline are skipped and
named); the report is rewritten after every stage, so a check cut short keeps what it measured:

- tests:  the pytest subset marked `gpu` (tests/gpu: cpu <-> cuda parity of the warp backend on
          every task family, no host synchronization in the env step under
          torch.cuda.set_sync_debug_mode("error"), graph-captured physics).
- syncs:  per bench task, the host synchronizations of 50 env steps and one PPO iteration and where
          they are (canter.bench.gpu_syncs).
- parity: for every task family, the largest qpos / qvel difference between the warp backend on
          Warp's CPU device and on CUDA after stepping the same states with the same controls.
- env:    `canter bench env` (env vs raw MuJoCo Warp) per task and env count.
- train:  `canter bench train` (step, step+inference and total FPS) per task and env count; on CUDA
          once per entry of `train_graphs`: eager ("off"), the learner replayed from CUDA graphs
          ("learner": algo.cuda_graph), and the env step too ("both": env.cuda_graph as well).
- learn:  `canter train dog-flat` on CUDA in chunks (with `learn_graphs`, one of the same three), with
          `canter eval` tracking errors after each chunk (metric against training wall time).

It writes OUT/gpu_check.json, OUT/gpu_check.md (tables) and OUT/gpu_check.png, and OUT/logs/ with
every stage's output. Without CUDA the CUDA stages are skipped with the reason said (the tests stage
still runs: its tests skip themselves), and, so that the report path is exercised anywhere, the env
and train benches run on the cpu backend at `fallback_envs` envs instead, marked as such.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from canter.core.errors import ConfigError
from canter.core.files import save_figure, write_text_atomic

TASKS = ("cartpole", "ant", "dog-flat", "humanoid-flat")
# the CUDA-graph switches of a training run: eager, the learner's (algo.cuda_graph), and the env step's too
GRAPH_FLAGS: dict[str, tuple[str, ...]] = {
    "off": (),
    "learner": ("--agent.algo.cuda-graph",),
    "both": ("--agent.algo.cuda-graph", "--env.cuda-graph"),
}
SIZES = (4096, 16384, 65536)
# one task per family and model (the others differ from these in terms only)
PARITY_TASKS = ("cartpole", "ant", "dog-flat", "dog-rough", "arm-grasp-state", "arm-grasp", "humanoid-flat",
                "humanoid-stairs", "hand-cube")
LEARN_METRICS = ("lin_vel_x_abs_error", "lin_vel_y_abs_error", "yaw_rate_abs_error")


@dataclass(kw_only=True)
class GpuCheckCfg:
    out: str
    tasks: tuple[str, ...] = TASKS
    sizes: tuple[int, ...] = SIZES
    stages: tuple[str, ...] = ("tests", "syncs", "parity", "env", "train", "learn")
    parity_tasks: tuple[str, ...] = PARITY_TASKS
    env_seconds: float = 1.0  # per repetition and side of bench env
    env_repeats: int = 3
    train_seconds: float = 20.0  # bench train wall time per task and size
    train_graphs: tuple[str, ...] = ("off", "learner", "both")  # on CUDA, each a run of its own (GRAPH_FLAGS)
    learn_graphs: str = "off"
    learn_task: str = "dog-flat"
    learn_envs: int = 8192
    learn_chunks: tuple[float, ...] = (60.0, 60.0, 60.0, 120.0)  # seconds of training between evaluations
    eval_episodes: int = 1024
    deadline: float = 3600.0  # seconds for the whole check; later stages are skipped past it
    fallback_envs: int = 64  # without CUDA: env count of the cpu-backend benches
    device: str = "cuda"


@dataclass(kw_only=True)
class StageRecord:
    stage: str
    name: str
    status: str  # "ok", "failed", "skipped", "timeout"
    seconds: float = 0.0
    reason: str = ""
    result: dict[str, Any] = field(default_factory=dict)
    log: str = ""


def _cuda_available() -> bool:
    try:
        import torch

        return torch.cuda.is_available()
    except Exception:  # pragma: no cover - a broken torch install
        return False


def _device_facts() -> dict[str, Any]:
    import platform

    import mujoco
    import torch

    facts: dict[str, Any] = {
        "python": platform.python_version(), "torch": torch.__version__, "torch_cuda": torch.version.cuda,
        "mujoco": mujoco.__version__, "cuda_available": torch.cuda.is_available(),
    }
    try:
        import mujoco_warp
        import warp

        facts["warp"] = warp.__version__
        facts["mujoco_warp"] = getattr(mujoco_warp, "__version__", None)
    except Exception as err:
        facts["warp"] = f"unavailable: {type(err).__name__}: {err}"
    if torch.cuda.is_available():
        props = torch.cuda.get_device_properties(0)
        facts.update(gpu=props.name, gpu_memory_gib=round(props.total_memory / 2**30, 1),
                     multiprocessors=props.multi_processor_count)
        try:
            smi = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                 capture_output=True, text=True, timeout=30)
            facts["driver"] = smi.stdout.strip() or None
        except (OSError, subprocess.SubprocessError):
            facts["driver"] = None
    from canter.bench.report import _cpu_model, git_commit

    facts.update(cpu=_cpu_model(), cores=os.cpu_count(), commit=git_commit())
    return facts


class _Check:
    def __init__(self, cfg: GpuCheckCfg, progress=None):
        self.cfg = cfg
        self.out = Path(cfg.out)
        self.logs = self.out / "logs"
        self.logs.mkdir(parents=True, exist_ok=True)
        self.start = time.monotonic()
        self.records: list[StageRecord] = []
        self.progress = progress or (lambda line: None)
        self.cuda = _cuda_available() and cfg.device.startswith("cuda")

    def left(self) -> float:
        return self.cfg.deadline - (time.monotonic() - self.start)

    def run(self, stage: str, name: str, argv: list[str], limit: float, parse_json: bool = True) -> StageRecord:
        """Run `python -m canter ARGV` (or argv as given when it starts with '-m'), bounded by `limit`
        seconds and by the deadline; record its outcome and its last JSON object on stdout."""
        left = self.left()
        if left < 5:
            record = StageRecord(stage=stage, name=name, status="skipped", reason="past the check's deadline")
            return self._keep(record)
        limit = min(limit, left)
        log = self.logs / f"{stage}-{name}.log".replace("/", "_")
        cmd = [sys.executable, *argv] if argv[0] == "-m" else [sys.executable, "-m", "canter", *argv]
        self.progress(f"[{time.monotonic() - self.start:6.0f} s] {stage} {name}: {' '.join(cmd[1:])}")
        began = time.monotonic()
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=limit, env=env)
            status = "ok" if done.returncode == 0 else "failed"
            stdout, stderr = done.stdout, done.stderr
            reason = "" if status == "ok" else f"exit {done.returncode}: {_last_line(stderr or stdout)}"
        except subprocess.TimeoutExpired as err:
            status, reason = "timeout", f"over its {limit:.0f} s"
            stdout = _text(err.stdout)
            stderr = _text(err.stderr)
        write_text_atomic(log, f"$ {' '.join(cmd)}\n--- stdout\n{stdout}\n--- stderr\n{stderr}")
        record = StageRecord(stage=stage, name=name, status=status, seconds=time.monotonic() - began,
                             reason=reason, log=str(log.relative_to(self.out)))
        if parse_json and status == "ok":
            parsed = _last_json(stdout)
            if parsed is None:
                record.status, record.reason = "failed", "no JSON on stdout"
            else:
                record.result = parsed
        return self._keep(record)

    def skip(self, stage: str, name: str, reason: str) -> StageRecord:
        return self._keep(StageRecord(stage=stage, name=name, status="skipped", reason=reason))

    def _keep(self, record: StageRecord) -> StageRecord:
        self.records.append(record)
        line = f"  -> {record.status}" + (f" ({record.reason})" if record.reason else "") + f" in {record.seconds:.0f} s"
        self.progress(line)
        return record


def _text(data: str | bytes | None) -> str:
    if data is None:
        return ""
    return data.decode(errors="replace") if isinstance(data, bytes) else data


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""


def _last_json(text: str) -> dict[str, Any] | None:
    """The last top-level JSON object printed on stdout (a pretty-printed block or one line)."""
    end = text.rfind("}")
    while end >= 0:
        start = text.rfind("\n{", 0, end)
        start = 0 if start < 0 and text.startswith("{") else start + 1 if start >= 0 else -1
        if start < 0:
            return None
        try:
            value = json.loads(text[start : end + 1])
            return value if isinstance(value, dict) else None
        except json.JSONDecodeError:
            end = text.rfind("}", 0, start)
    return None


def run_gpu_check(cfg: GpuCheckCfg, progress=None) -> dict[str, Any]:
    if not cfg.out:
        raise ConfigError("--out: a directory is required")
    unknown = set(cfg.stages) - {"tests", "syncs", "parity", "env", "train", "learn"}
    if unknown:
        raise ConfigError(f"--stages: unknown stage {sorted(unknown)[0]!r} "
                          "(have tests, syncs, parity, env, train, learn)")
    unknown_graphs = (set(cfg.train_graphs) | {cfg.learn_graphs}) - set(GRAPH_FLAGS)
    if unknown_graphs:
        raise ConfigError(f"--train-graphs / --learn-graphs: unknown {', '.join(sorted(unknown_graphs))} "
                          f"(have {', '.join(GRAPH_FLAGS)})")
    if any(n < 1 for n in cfg.sizes) or cfg.learn_envs < 1:
        raise ConfigError("--sizes / --learn-envs: env counts must be >= 1")
    check = _Check(cfg, progress)
    facts = _device_facts()
    no_cuda = "no CUDA device (torch.cuda.is_available() is False)" if not check.cuda else ""
    progress = check.progress
    progress(f"GPU check into {check.out}: {facts.get('gpu') or 'no GPU'}; stages {', '.join(cfg.stages)}")

    bench_device = ("warp", cfg.device) if check.cuda else ("cpu", "cpu")
    sizes = cfg.sizes if check.cuda else (cfg.fallback_envs,)

    def tests() -> None:
        folder = Path(__file__).resolve().parents[3] / "tests"
        if not folder.is_dir():
            check.skip("tests", "pytest-gpu", f"no tests folder at {folder} (run from a source checkout)")
            return
        # with pytest-xdist (add its wheel to the bundle) the tests run side by side: each parity test
        # spends most of its time building Warp's CPU-device kernels of its model, on one core
        workers = ["-n", str(min(9, os.cpu_count() or 1))] if check.cuda and importlib.util.find_spec("xdist") else []
        record = check.run("tests", "pytest-gpu", ["-m", "pytest", "-q", "-m", "gpu", "-p", "no:cacheprovider", "-rA",
                                                 *workers, str(folder / "gpu")], limit=900, parse_json=False)
        record.result = _pytest_counts(check.out / record.log)
        if not check.cuda:
            record.reason = record.reason or "no CUDA: the gpu tests skip themselves"

    def per_task(stage: str, tasks: tuple[str, ...], argv) -> None:
        for task in tasks:
            if no_cuda:
                check.skip(stage, task, no_cuda)
            else:
                check.run(stage, task, argv(task), limit=600)

    def benches(stage: str) -> None:
        for task in cfg.tasks:
            for n in sizes:
                common = [task, "--backend", bench_device[0], "--device", bench_device[1], "--num-envs", str(n)]
                if stage == "env":  # on CUDA eager and as one CUDA graph (env.cuda_graph), side by side
                    for graph in (False, True) if check.cuda else (False,):
                        check.run("env", f"{task}-{n}" + ("-graph" if graph else ""),
                                  ["bench", "env", *common, "--seconds", str(cfg.env_seconds), "--repeats",
                                   str(cfg.env_repeats), "--json", *(["--cuda-graph"] if graph else [])], limit=600)
                else:
                    for graphs in cfg.train_graphs if check.cuda else ("off",):
                        record = check.run("train", f"{task}-{n}" + ("" if graphs == "off" else f"-graph-{graphs}"),
                                           ["bench", "train", *common, "--max-time", str(cfg.train_seconds), "--json",
                                            *GRAPH_FLAGS[graphs]], limit=cfg.train_seconds + 300)
                        record.result["cuda_graphs"] = graphs

    def learn() -> None:
        if no_cuda:
            check.skip("learn", cfg.learn_task, no_cuda)
        else:
            _learn(check, cfg)

    stages = {
        "tests": tests,
        "syncs": lambda: per_task("syncs", cfg.tasks, lambda task: ["-m", "canter.bench.gpu_syncs", task, "4096"]),
        "parity": lambda: per_task("parity", cfg.parity_tasks, lambda task: ["-m", "canter.bench.gpu_parity", task]),
        "env": lambda: benches("env"),
        "train": lambda: benches("train"),
        "learn": learn,
    }
    report: dict[str, Any] = {}
    for stage in dict.fromkeys(cfg.stages):  # in the order given: on a short lease, what matters most first
        stages[stage]()
        # the report so far, after every stage: a check cut off by its machine's lease keeps its results
        report = {"device": facts, "config": _jsonable(cfg), "cuda": check.cuda,
                  "records": [_jsonable(r) for r in check.records], "seconds": time.monotonic() - check.start}
        write_text_atomic(check.out / "gpu_check.json", json.dumps(report, indent=2))
        write_text_atomic(check.out / "gpu_check.md", markdown_report(report))
    try:
        plot_report(report, check.out / "gpu_check.png")
    except Exception as err:
        progress(f"no PNG: {type(err).__name__}: {err}")
    return report


def _learn(check: _Check, cfg: GpuCheckCfg) -> None:
    run_dir = check.out / "learn_run"
    trained = 0.0
    for k, chunk in enumerate(cfg.learn_chunks):
        if k == 0:
            argv = ["train", cfg.learn_task, "--backend", "warp", "--device", cfg.device, "--num-envs",
                    str(cfg.learn_envs), "--max-time", str(chunk), "--run-dir", str(run_dir), "--quiet",
                    "--max-iterations", str(10**6), *GRAPH_FLAGS[cfg.learn_graphs]]
        else:
            argv = ["train", "--resume", str(run_dir), "--max-time", str(chunk), "--quiet"]
        record = check.run("learn", f"train-{k}", argv, limit=chunk + 240, parse_json=False)
        if record.status != "ok":
            return
        trained += chunk
        record.result = _progress_tail(run_dir)
        evaluation = check.run("learn", f"eval-{k}", ["eval", str(run_dir), "--episodes", str(cfg.eval_episodes),
                                                      "--num-envs", str(min(cfg.eval_episodes, 4096)), "--json"],
                               limit=600)
        evaluation.result["train_seconds_requested"] = trained
        evaluation.result["train_wall_time_s"] = record.result.get("wall_time_s")
        evaluation.result["env_steps"] = record.result.get("env_steps")


def _progress_tail(run_dir: Path) -> dict[str, Any]:
    """The last row of a run's progress.csv, as numbers."""
    import csv

    path = run_dir / "progress.csv"
    if not path.exists():
        return {}
    with path.open() as f:
        rows = list(csv.DictReader(f))
    if not rows:
        return {}
    out: dict[str, Any] = {}
    for key, value in rows[-1].items():
        try:
            out[key] = float(value)
        except (TypeError, ValueError):
            out[key] = value
    return out


def _pytest_counts(log: Path) -> dict[str, Any]:
    import re

    text = log.read_text() if log.exists() else ""
    counts = {word: int(n) for n, word in re.findall(r"(\d+) (passed|failed|skipped|error|errors|deselected)", text)}
    return counts


def _jsonable(value: Any) -> Any:
    import dataclasses

    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {k: _jsonable(v) for k, v in dataclasses.asdict(value).items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


def _fmt(value: Any, spec: str = ",.0f") -> str:
    return "-" if value is None else format(value, spec)


def _table(title: str, columns: tuple[str, ...], rows: list[tuple[Any, ...]]) -> list[str]:
    """A markdown section with a table (the first column left-aligned, the rest right; a '|' inside a cell
    escaped); none without rows."""
    if not rows:
        return []
    align = "|---|" + "---:|" * (len(columns) - 1)
    return ["", f"## {title}", "", "| " + " | ".join(columns) + " |", align,
            *("| " + " | ".join(str(v).replace("|", "\\|") for v in row) + " |" for row in rows)]


def markdown_report(report: dict[str, Any]) -> str:
    facts = report["device"]
    lines = ["# Canter GPU check", ""]
    lines.append(f"- device: {facts.get('gpu') or 'no CUDA device'}"
                 + (f", {facts.get('gpu_memory_gib')} GiB, driver {facts.get('driver')}" if facts.get("gpu") else ""))
    lines.append(f"- torch {facts.get('torch')} (CUDA {facts.get('torch_cuda')}), warp {facts.get('warp')}, "
                 f"mujoco_warp {facts.get('mujoco_warp')}, mujoco {facts.get('mujoco')}, Python {facts.get('python')}")
    lines.append(f"- host: {facts.get('cpu')}, {facts.get('cores')} cores; commit {facts.get('commit')}; "
                 f"check took {report['seconds']:.0f} s")
    records = report["records"]
    skipped = [r for r in records if r["status"] != "ok"]
    if not report["cuda"]:
        lines.append("- **no CUDA**: the CUDA stages were skipped; the env/train tables below ran on the cpu backend")
    lines += ["", "## Stages", "", "| stage | name | status | seconds | note |", "|---|---|---|---:|---|"]
    for r in records:
        lines.append(f"| {r['stage']} | {r['name']} | {r['status']} | {r['seconds']:.0f} | {r['reason']} |")
    tests = [r for r in records if r["stage"] == "tests"]
    if tests and tests[0]["result"]:
        lines += ["", "GPU tests: " + ", ".join(f"{v} {k}" for k, v in tests[0]["result"].items())]
    def by_task_and_size(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        order = {task: k for k, task in enumerate(dict.fromkeys(r["result"]["task"] for r in rows))}
        return sorted(rows, key=lambda r: (order[r["result"]["task"]], r["result"]["num_envs"],
                                           bool(r["result"].get("cuda_graph")),
                                           list(GRAPH_FLAGS).index(r["result"].get("cuda_graphs", "off"))))

    def ok(stage: str) -> list[dict[str, Any]]:
        return [r for r in records if r["stage"] == stage and r["status"] == "ok"]

    lines += _table("Host synchronizations under torch.cuda.set_sync_debug_mode (50 env steps, then one PPO iteration)",
                    ("task", "envs", "syncs in 50 env steps", "syncs in one iteration", "sites"),
                    [(r["name"], y["num_envs"], sum(y["env_step_syncs"].values()), sum(y["iteration_syncs"].values()),
                      "; ".join(site.split(" ")[0] for site in {**y["env_step_syncs"], **y["iteration_syncs"]}))
                     for r in ok("syncs") for y in (r["result"],)])
    lines += _table("Warp backend: Warp's CPU device vs CUDA (same states and controls)",
                    ("task", "envs", "control steps", "max abs qpos diff", "max abs qvel diff", "tolerance (qpos, qvel)",
                     "CPU device's own rounding spread (qpos, qvel)", "within"),
                    [(r["name"], p["num_envs"], p["steps"], f"{p['qpos_max_abs']:.2e}", f"{p['qvel_max_abs']:.2e}",
                      p["tolerance"], _spread(p), p["within"]) for r in ok("parity") for p in (r["result"],)])
    lines += _table("Env step (random actions): canter env vs raw physics",
                    ("task", "envs", "step as a CUDA graph", "raw steps/s", "env steps/s", "env / raw", "GPU memory GiB"),
                    [(e["task"], f"{e['num_envs']:,}", "yes" if e.get("cuda_graph_active") else "no",
                      _fmt(e["raw_rollout_steps_per_s"]), _fmt(e["env_steps_per_s"]),
                      f"{e['ratio']:.3f}", _fmt(e.get("gpu_memory_bytes") and e["gpu_memory_bytes"] / 2**30, ".2f"))
                     for r in by_task_and_size(ok("env")) for e in (r["result"],)])
    lines += _table("Training (PPO): seed 003's three figures, medians over iterations",
                    ("task", "envs", "CUDA graphs", "step FPS", "step+inference FPS", "total FPS", "iteration s",
                     "iterations"),
                    [(t["task"], f"{t['num_envs']:,}", t.get("cuda_graphs", "off"), _fmt(t["step_fps"]), _fmt(t["step_inference_fps"]),
                      _fmt(t["total_fps"]), f"{t['iteration_time_s']:.3f}", t["iterations"])
                     for r in by_task_and_size(ok("train")) for t in (r["result"],)])
    nan = float("nan")
    lines += _table("Learning: dog-flat on CUDA, deterministic policy evaluated after each chunk",
                    ("training wall s", "env steps", "return", "vx error m/s", "vy error m/s", "yaw-rate error rad/s",
                     "falls"),
                    [(_fmt(e.get("train_wall_time_s"), ".0f"), _fmt(e.get("env_steps")), f"{e['mean_return']:.2f}",
                      f"{e.get('lin_vel_x_abs_error', nan):.3f}", f"{e.get('lin_vel_y_abs_error', nan):.3f}",
                      f"{e.get('yaw_rate_abs_error', nan):.3f}", f"{1.0 - float(e.get('ended_by_time_out', nan)):.3f}")
                     for r in ok("learn") if r["name"].startswith("eval") for e in (r["result"],)])
    if skipped:
        lines += ["", "Not run or not passed: " + "; ".join(f"{r['stage']} {r['name']}: {r['status']} ({r['reason']})"
                                                      for r in skipped)]
    return "\n".join(lines) + "\n"


def _spread(parity: dict[str, Any]) -> str:
    """The parity record's rounding spread (the CPU device against itself one float32 rounding apart),
    or a dash for a record written before it was measured."""
    if "qpos_rounding_spread" not in parity:
        return "-"
    return f"{parity['qpos_rounding_spread']:.1e}, {parity['qvel_rounding_spread']:.1e}"


def plot_report(report: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    records = [r for r in report["records"] if r["status"] == "ok"]
    learn = [r["result"] for r in records if r["stage"] == "learn" and r["name"].startswith("eval")]
    fig, axes = plt.subplots(1, 3 if learn else 2, figsize=(16 if learn else 11, 4.5))  # no empty learning panel
    for stage, key, ax, title in (("env", "env_steps_per_s", axes[0], "env steps/s (random actions)"),
                                  ("train", "total_fps", axes[1], "PPO training: total FPS")):
        by_task: dict[str, list[tuple[int, float]]] = {}
        for r in records:
            if r["stage"] == stage:
                graphs = r["result"].get("cuda_graphs", "off")
                label = (r["result"]["task"] + (" (CUDA graph)" if r["result"].get("cuda_graph") else "")
                         + ("" if graphs == "off" else f" (CUDA graphs: {graphs})"))
                by_task.setdefault(label, []).append((r["result"]["num_envs"], r["result"][key]))
        for task, points in by_task.items():
            points.sort()
            ax.plot([p[0] for p in points], [p[1] for p in points], "o-", label=task)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("envs")
        ax.set_title(title)
        ax.grid(True, which="both", alpha=0.3)
        if by_task:
            ax.legend()
    if learn:
        ax = axes[2]
        times = [e.get("train_wall_time_s") or e.get("train_seconds_requested") for e in learn]
        for metric in LEARN_METRICS:
            ax.plot(times, [e.get(metric) for e in learn], "o-", label=metric)
        ax.axhline(0.15, color="gray", linestyle="--", linewidth=1, label="0.15 target")
        ax.legend()
        ax.set_title("dog-flat tracking error vs training wall time")
        ax.set_xlabel("training wall time (s)")
        ax.grid(True, alpha=0.3)
    device = report["device"].get("gpu") or "no CUDA (cpu backend)"
    fig.suptitle(f"Canter GPU check: {device}, torch {report['device'].get('torch')}, warp {report['device'].get('warp')}")
    save_figure(fig, path, dpi=110)


def merge_reports(paths: list[Path]) -> dict[str, Any]:
    """One report of several partial checks on the same device (each DIR/gpu_check.json): records in
    order, the first one's device facts, the seconds summed. Logs stay where they are."""
    reports = [json.loads((Path(p) / "gpu_check.json").read_text()) for p in paths]
    if not reports:
        raise ConfigError("merge: no reports given")
    gpus = {r["device"].get("gpu") for r in reports}
    if len(gpus) > 1:
        raise ConfigError(f"merge: the reports come from different devices ({', '.join(map(str, gpus))})")
    merged = dict(reports[0])
    merged["records"] = [record for r in reports for record in r["records"]]
    merged["seconds"] = sum(r["seconds"] for r in reports)
    merged["parts"] = [str(p) for p in paths]
    return merged


def main(argv: list[str] | None = None) -> int:
    """`python -m canter.bench.gpu merge OUT DIR [DIR ...]`: merge partial checks into OUT."""
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) < 3 or argv[0] != "merge":
        print("usage: python -m canter.bench.gpu merge OUT DIR [DIR ...]", file=sys.stderr)
        return 2
    out = Path(argv[1])
    out.mkdir(parents=True, exist_ok=True)
    report = merge_reports([Path(p) for p in argv[2:]])
    write_text_atomic(out / "gpu_check.json", json.dumps(report, indent=2))
    write_text_atomic(out / "gpu_check.md", markdown_report(report))
    plot_report(report, out / "gpu_check.png")
    print(out / "gpu_check.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
