"""`canter bench qp`: the batched QP solver vs OSQP in a Python loop vs proxsuite's parallel batch.

All three solve the same B ground-reaction-force problems (12 variables, 20 rows: random stances,
contact patterns and desired wrenches, float64 data) at equal accuracy: each baseline's tolerance
and Canter's iteration budget are the loosest of a ladder whose largest KKT residual
(`canter.control.qp.kkt_residual`, the problem's units) over the batch is ≤ `target_kkt` (for a
solver that misses it on a few problems at every setting: the first with the fewest misses, and
the count is reported as `*_above_target`).
Timed: Canter's `solve` on the tensors; OSQP's `update` + `solve` per problem (one object, warm
started from the previous problem, as a controller would); proxsuite's `solve_in_parallel` on a
`BatchQP`, without and with the per-problem `init` loop that fills it. Repetitions alternate.
Rates are problems per wall second (`*_problems_per_s`, median/min/max) and per CPU second of
the process, all threads together (`*_problems_per_cpu_s`: on a shared machine the wall clock
also counts the other processes' time).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, TypeVar

import numpy as np
import torch

from canter.bench.report import machine_info
from canter.control.qp import QPStatus, grf_problem, kkt_residual, solve
from canter.control.qp import kernel as qp_kernel
from canter.core.device import available_cores, torch_threads
from canter.core.errors import CanterError, ConfigError
from canter.core.files import save_figure

EPS_LADDER = (1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9)
ITERATION_LADDER = {"ipm": (10, 12, 14, 16, 18, 20, 25, 30, 40), "admm": (50, 100, 200, 400, 800, 1600)}
T = TypeVar("T")


@dataclass(kw_only=True)
class QpBenchCfg:
    batch: int = 4096
    dtype: str = "float64"  # float64 or float32 (Canter only; the baselines are float64)
    method: str = "ipm"  # Canter's method: ipm or admm
    iterations: int = 0  # Canter's budget; 0 = the smallest of the ladder that reaches target_kkt
    target_kkt: float = 1e-5
    repeats: int = 3
    threads: int = 0  # torch and proxsuite threads; 0 = all cores
    seed: int = 0


def random_stances(batch: int, seed: int, dtype: torch.dtype = torch.float64):
    """GRF problems (P, q, A, l, u) of random feasible stances of a 12 kg quadruped: feet within
    ±5 cm of a 0.38 × 0.22 m stance 0.3 m below the CoM, one of 7 contact patterns (≥ 2 feet
    down), CoM acceleration ~ N(0, diag(1, 1, 2)²) m/s² plus gravity, torque ~ N(0, 2²) N·m, μ = 0.6."""
    g = torch.Generator().manual_seed(seed)
    nominal = torch.tensor(
        [[0.19, 0.11, -0.3], [0.19, -0.11, -0.3], [-0.19, 0.11, -0.3], [-0.19, -0.11, -0.3]], dtype=dtype
    )
    feet = nominal + 0.05 * (2 * torch.rand(batch, 4, 3, generator=g, dtype=dtype) - 1)
    patterns = torch.tensor(
        [[1, 1, 1, 1], [1, 0, 0, 1], [0, 1, 1, 0], [1, 1, 1, 0], [0, 1, 1, 1], [1, 0, 1, 1], [1, 1, 0, 1]],
        dtype=torch.bool,
    )
    contact = patterns[torch.randint(0, len(patterns), (batch,), generator=g)]
    acc = torch.randn(batch, 3, generator=g, dtype=dtype) * torch.tensor([1.0, 1.0, 2.0], dtype=dtype)
    force = 12.0 * (acc + torch.tensor([0.0, 0.0, 9.81], dtype=dtype))
    torque = 2.0 * torch.randn(batch, 3, generator=g, dtype=dtype)
    return grf_problem(feet, contact, torch.cat((force, torque), -1), mu=0.6, fz_max=150.0)


def _osqp_loop(problems, eps: float):
    """Returns a function that solves every problem with one OSQP object (update + solve)."""
    import osqp
    import scipy.sparse as sp

    P, q, A, l, u = (t.numpy() for t in problems)
    upper = np.triu(np.ones(P.shape[1:], dtype=bool))
    pattern = sp.csc_matrix(np.where(upper, 1.0, 0.0))
    rows, cols = pattern.nonzero()
    order = np.lexsort((rows, cols))  # CSC order: by column, then row
    rows, cols = rows[order], cols[order]
    A0 = sp.csc_matrix(A[0])
    big = 1e30
    solver = osqp.OSQP()
    solver.setup(
        sp.csc_matrix((P[0][rows, cols], (rows, cols)), shape=P.shape[1:]),
        q[0],
        A0,
        np.clip(l[0], -big, big),
        np.clip(u[0], -big, big),
        eps_abs=eps,
        eps_rel=0.0,
        polishing=False,
        verbose=False,
        max_iter=100_000,
    )

    def run():
        x = np.empty(q.shape)
        y = np.empty(l.shape)
        for i in range(q.shape[0]):
            solver.update(Px=P[i][rows, cols], q=q[i], l=np.clip(l[i], -big, big), u=np.clip(u[i], -big, big))
            result = solver.solve(raise_error=False)
            x[i], y[i] = result.x, result.y
        return x, y

    return run


def _proxsuite_batch(problems, eps: float, threads: int):
    """Returns (fill, solve, read) for proxsuite's dense BatchQP."""
    import proxsuite

    dense = proxsuite.proxqp.dense
    P, q, A, l, u = (t.numpy() for t in problems)
    A = np.ascontiguousarray(np.broadcast_to(A, (q.shape[0], *A.shape[1:])))
    state = {}

    def fill():
        batch = dense.BatchQP(q.shape[0])
        for i in range(q.shape[0]):
            qp = batch.init_qp_in_place(q.shape[1], 0, l.shape[1])
            qp.settings.eps_abs = eps
            qp.settings.eps_rel = 0.0
            qp.init(P[i], q[i], None, None, A[i], l[i], u[i])
        state["batch"] = batch

    def run():
        dense.solve_in_parallel(state["batch"], num_threads=threads)

    def read():
        batch = state["batch"]
        x = np.stack([batch.get(i).results.x for i in range(q.shape[0])])
        y = np.stack([batch.get(i).results.z for i in range(q.shape[0])])
        return x, y

    return fill, run, read


@dataclass
class Accuracy:
    max_kkt: float  # the largest KKT residual over the batch
    above_target: int  # problems whose KKT residual exceeds the target


def _accuracy(problems, x, y, target: float) -> Accuracy:
    P, q, A, l, u = problems
    kkt = kkt_residual(P, q, A, l, u, torch.as_tensor(x, dtype=P.dtype), torch.as_tensor(y, dtype=P.dtype))
    return Accuracy(max_kkt=float(kkt.max()), above_target=int((kkt > target).sum()))


def _first(ladder: tuple[T, ...], accuracy: Callable[[T], Accuracy]) -> tuple[T, Accuracy]:
    """The first ladder entry with no problem above the target; if none has that, the first with
    the fewest (a solver that fails on a few problems at any tolerance)."""
    best: tuple[T, Accuracy] | None = None
    for value in ladder:
        reached = accuracy(value)
        if best is None or reached.above_target < best[1].above_target:
            best = (value, reached)
        if reached.above_target == 0:
            break
    assert best is not None
    return best


@dataclass(kw_only=True)
class SolverRate:
    """Problems per second of one solver: median, min and max over repetitions, and per CPU-second."""

    problems_per_s: float
    problems_per_s_min: float
    problems_per_s_max: float
    problems_per_cpu_s: float


@dataclass(kw_only=True)
class QpBenchResult:
    """`canter bench qp`: settings, the accuracy each solver reached, its rate, Canter's speedups.
    to_json() gives the report's flat keys (`<solver>_problems_per_s`, ...)."""

    batch: int
    dtype: str
    method: str
    iterations: int
    threads: int
    repeats: int
    seed: int
    target_kkt: float
    problem: str
    max_kkt_residual: float
    canter_above_target: int
    canter_solved: int
    canter_kernel: str
    canter_torch_max_kkt_residual: float
    canter_torch_above_target: int
    osqp_max_kkt_residual: float
    osqp_above_target: int
    osqp_eps_abs: float
    proxsuite_max_kkt_residual: float
    proxsuite_above_target: int
    proxsuite_eps_abs: float
    solvers: dict[str, SolverRate]  # canter, canter_torch, osqp_loop, proxsuite_batch, proxsuite_batch_with_setup
    speedup_vs_osqp_loop: float
    speedup_vs_proxsuite_batch: float
    machine: dict[str, Any]
    commit: str

    def to_json(self) -> dict[str, Any]:
        data = {k: v for k, v in asdict(self).items() if k not in ("solvers", "machine", "commit")}
        for name, rate in self.solvers.items():
            data.update({f"{name}_{key}": value for key, value in asdict(rate).items()})
        return {**data, "machine": self.machine, "commit": self.commit}


def run_qp_bench(cfg: QpBenchCfg, log: Callable[[str], None] = lambda _: None) -> QpBenchResult:
    if cfg.batch < 1 or cfg.repeats < 1 or cfg.target_kkt <= 0:
        raise ConfigError("bench qp: batch and repeats must be >= 1 and target_kkt > 0")
    if cfg.iterations < 0 or cfg.threads < 0:
        raise ConfigError(f"bench qp: --iterations and --threads must be >= 0 (0: chosen), got {cfg.iterations}, {cfg.threads}")
    if cfg.method not in ITERATION_LADDER:
        raise ConfigError(f"bench qp: method must be ipm or admm, got {cfg.method!r}")
    if cfg.dtype not in ("float64", "float32"):
        raise ConfigError(f"bench qp: dtype must be float64 or float32, got {cfg.dtype!r}")
    try:
        import osqp  # noqa: F401
        import proxsuite  # noqa: F401
    except ImportError as err:
        raise CanterError(
            f"bench qp needs osqp and proxsuite: pip install -e '.[bench]' ({err.name} missing)"
        ) from err
    threads = cfg.threads or available_cores()
    problems = random_stances(cfg.batch, cfg.seed)
    dtype = getattr(torch, cfg.dtype)
    ours = tuple(t.to(dtype) for t in problems)

    def canter_solve(iterations: int, kernel: str = "auto"):
        return solve(*ours, iterations=iterations, method=cfg.method, kernel=kernel)  # type: ignore[arg-type]

    def canter_accuracy(iterations: int) -> Accuracy:
        x, info = canter_solve(iterations)
        return _accuracy(problems, x.double(), info.y.double(), cfg.target_kkt)

    def osqp_accuracy(eps: float) -> Accuracy:
        return _accuracy(problems, *_osqp_loop(problems, eps)(), cfg.target_kkt)

    def prox_accuracy(eps: float) -> Accuracy:
        fill, run, read = _proxsuite_batch(problems, eps, threads)
        fill()
        run()
        return _accuracy(problems, *read(), cfg.target_kkt)

    with torch_threads(threads):
        if cfg.iterations > 0:
            iterations, canter_kkt = cfg.iterations, canter_accuracy(cfg.iterations)
        else:
            iterations, canter_kkt = _first(ITERATION_LADDER[cfg.method], canter_accuracy)
        log(f"canter ({cfg.method}): {iterations} iterations, {canter_kkt}")
        osqp_eps, osqp_kkt = _first(EPS_LADDER, osqp_accuracy)
        log(f"osqp: eps_abs {osqp_eps:g}, {osqp_kkt}")
        prox_eps, prox_kkt = _first(EPS_LADDER, prox_accuracy)
        log(f"proxsuite: eps_abs {prox_eps:g}, {prox_kkt}")
        osqp_run = _osqp_loop(problems, osqp_eps)
        fill, prox_run, _ = _proxsuite_batch(problems, prox_eps, threads)
        solved = int((canter_solve(iterations)[1].status == QPStatus.SOLVED).sum())
        x_torch, info_torch = canter_solve(iterations, "torch")  # the code path GPUs run, here on the CPU
        torch_kkt = _accuracy(problems, x_torch.double(), info_torch.y.double(), cfg.target_kkt)
        rates: dict[str, list[float]] = {
            "canter": [],
            "canter_torch": [],
            "osqp": [],
            "proxsuite": [],
            "proxsuite_with_setup": [],
        }
        cpu_rates: dict[str, list[float]] = {key: [] for key in rates}
        for rep in range(cfg.repeats):
            wall, cpu = _timed(lambda: canter_solve(iterations))
            rates["canter"].append(cfg.batch / wall)
            cpu_rates["canter"].append(cfg.batch / cpu)
            wall, cpu = _timed(lambda: canter_solve(iterations, "torch"))
            rates["canter_torch"].append(cfg.batch / wall)
            cpu_rates["canter_torch"].append(cfg.batch / cpu)
            wall, cpu = _timed(osqp_run)
            rates["osqp"].append(cfg.batch / wall)
            cpu_rates["osqp"].append(cfg.batch / cpu)
            fill_wall, fill_cpu = _timed(fill)
            wall, cpu = _timed(prox_run)
            fill()  # the timed solve left solved problems behind: refill for the next repetition
            rates["proxsuite"].append(cfg.batch / wall)
            rates["proxsuite_with_setup"].append(cfg.batch / (fill_wall + wall))
            cpu_rates["proxsuite"].append(cfg.batch / cpu)
            cpu_rates["proxsuite_with_setup"].append(cfg.batch / (fill_cpu + cpu))
            log(
                f"repetition {rep + 1}/{cfg.repeats}: "
                + ", ".join(f"{k} {v[-1]:,.0f}/s" for k, v in rates.items())
            )
    names = {"canter": "canter", "canter_torch": "canter_torch", "osqp": "osqp_loop", "proxsuite": "proxsuite_batch",
             "proxsuite_with_setup": "proxsuite_batch_with_setup"}
    solvers = {names[key]: SolverRate(problems_per_s=statistics.median(values), problems_per_s_min=min(values),
                                      problems_per_s_max=max(values),
                                      problems_per_cpu_s=statistics.median(cpu_rates[key]))
               for key, values in rates.items()}
    canter_rate = statistics.median(rates["canter"])
    machine = machine_info()
    return QpBenchResult(
        batch=cfg.batch, dtype=cfg.dtype, method=cfg.method, iterations=iterations, threads=threads,
        repeats=cfg.repeats, seed=cfg.seed, target_kkt=cfg.target_kkt,
        problem="grf: 12 variables, 20 rows (4 feet x [fz bounds, 4-face friction pyramid]), random stances",
        max_kkt_residual=canter_kkt.max_kkt, canter_above_target=canter_kkt.above_target, canter_solved=solved,
        canter_kernel="fused" if cfg.method == "ipm" and qp_kernel.available(ours[0]) else "torch",
        canter_torch_max_kkt_residual=torch_kkt.max_kkt, canter_torch_above_target=torch_kkt.above_target,
        osqp_max_kkt_residual=osqp_kkt.max_kkt, osqp_above_target=osqp_kkt.above_target, osqp_eps_abs=osqp_eps,
        proxsuite_max_kkt_residual=prox_kkt.max_kkt, proxsuite_above_target=prox_kkt.above_target,
        proxsuite_eps_abs=prox_eps, solvers=solvers,
        speedup_vs_osqp_loop=canter_rate / statistics.median(rates["osqp"]),
        speedup_vs_proxsuite_batch=canter_rate / statistics.median(rates["proxsuite"]),
        machine=machine, commit=str(machine["commit"]),
    )


def _timed(fn: Callable[[], object]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process, all threads) of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def plot_qp(result: dict[str, Any], path) -> None:
    """Bar chart of problems/s (log scale) with each solver's max KKT residual; result: a
    QpBenchResult's to_json()."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [
        f"Canter\n({result['canter_kernel']})",
        "Canter\n(torch ops)",
        "OSQP\n(Python loop)",
        "proxsuite BatchQP\n(solve only)",
        "proxsuite BatchQP\n(init + solve)",
    ]
    keys = ["canter", "canter_torch", "osqp_loop", "proxsuite_batch", "proxsuite_batch_with_setup"]
    kkt = [
        result["max_kkt_residual"],
        result["canter_torch_max_kkt_residual"],
        result["osqp_max_kkt_residual"],
        result["proxsuite_max_kkt_residual"],
        result["proxsuite_max_kkt_residual"],
    ]
    fig, ax = plt.subplots(figsize=(8.5, 4))
    values = [result[f"{k}_problems_per_s"] for k in keys]
    errors = [
        [v - result[f"{k}_problems_per_s_min"] for k, v in zip(keys, values, strict=True)],
        [result[f"{k}_problems_per_s_max"] - v for k, v in zip(keys, values, strict=True)],
    ]
    bars = ax.bar(
        labels,
        values,
        yerr=errors,
        color=["tab:blue", "tab:cyan", "tab:gray", "tab:orange", "tab:orange"],
        capsize=4,
    )
    for bar, value, residual in zip(bars, values, kkt, strict=True):
        ax.annotate(
            f"{value:,.0f}/s\nKKT ≤ {residual:.1e}",
            (bar.get_x() + bar.get_width() / 2, value),
            ha="center",
            va="bottom",
            fontsize=8,
        )
    ax.set_yscale("log")
    ax.set_ylabel("problems / s")
    machine = result["machine"]
    ax.set_title(
        f"GRF QP, batch {result['batch']}, {result['dtype']}, {machine['cpu']} ({result['threads']} threads), "
        f"commit {result['commit']}",
        fontsize=8,
    )
    save_figure(fig, path, dpi=120)
