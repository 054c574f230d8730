"""`canter bench qp`: batched GRF QPs, Canter's solver vs OSQP in a loop vs proxsuite's BatchQP."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from canter.cli.bench.output import write_report


@dataclass(kw_only=True)
class QpArgs:
    """Batched GRF QPs: Canter's solver vs OSQP in a loop vs proxsuite's BatchQP, equal accuracy."""

    batch: int = 4096
    dtype: str = "float64"  # Canter's dtype (float64 or float32); the baselines are float64
    method: str = "ipm"  # Canter's method: ipm (interior point) or admm
    iterations: int = 0  # Canter's fixed budget; 0 = the smallest that reaches target_kkt
    target_kkt: float = 1e-5  # every solver is tuned to reach this max KKT residual
    repeats: int = 3
    threads: int = 0  # torch and proxsuite threads; 0 = all cores
    seed: int = 0
    out: str = ""  # if set, write qp_<batch>.json and .png into this directory
    json: bool = False

    def run(self, rest: list[str]) -> int:
        return qp_main(self)


def qp_main(args: QpArgs) -> int:
    from rich.console import Console
    from rich.table import Table

    from canter.bench.qp import QpBenchCfg, plot_qp, run_qp_bench

    console = Console(stderr=True)
    cfg = QpBenchCfg(**{k: v for k, v in asdict(args).items() if k not in ("out", "json")})
    result = run_qp_bench(cfg, log=lambda m: console.print(f"[dim]{m}[/dim]")).to_json()
    if args.out:
        stem = Path(args.out) / f"qp_{args.batch}"
        write_report(stem.with_suffix(".json"), result)
        plot_qp(result, stem.with_suffix(".png"))
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    machine = result["machine"]
    table = Table(title=f"GRF QP, batch {args.batch}, Canter {result['method']} in {result['dtype']}, {result['iterations']} "
                  f"iterations, {machine['cpu']} ({result['threads']} threads)", title_justify="left")
    for column in ("solver", "problems/s (median)", "min", "max", "problems/CPU-s", "max KKT residual", "setting"):
        table.add_column(column, justify="right")
    rows = ((f"Canter qp.solve ({result['canter_kernel']})", "canter", "", "canter", f"{result['iterations']} iterations"),
            ("Canter qp.solve (torch ops)", "canter_torch", "canter_torch_", "canter_torch", f"{result['iterations']} iterations"),
            ("OSQP, Python loop", "osqp_loop", "osqp_", "osqp", f"eps_abs {result['osqp_eps_abs']:g}"),
            ("proxsuite BatchQP, solve", "proxsuite_batch", "proxsuite_", "proxsuite", f"eps_abs {result['proxsuite_eps_abs']:g}"),
            ("proxsuite BatchQP, init + solve", "proxsuite_batch_with_setup", "proxsuite_", "proxsuite",
             f"eps_abs {result['proxsuite_eps_abs']:g}"))
    for label, key, kkt_prefix, solver, setting in rows:
        kkt = f"{result[kkt_prefix + 'max_kkt_residual']:.1e}"
        if result[f"{solver}_above_target"]:
            kkt += f" ({result[f'{solver}_above_target']} above target)"
        table.add_row(label, f"{result[key + '_problems_per_s']:,.0f}", f"{result[key + '_problems_per_s_min']:,.0f}",
                      f"{result[key + '_problems_per_s_max']:,.0f}", f"{result[key + '_problems_per_cpu_s']:,.0f}",
                      kkt, setting)
    Console().print(table)
    print(f"Canter / OSQP loop: {result['speedup_vs_osqp_loop']:.1f}x; Canter / proxsuite batch: "
          f"{result['speedup_vs_proxsuite_batch']:.2f}x; commit {result['commit']}")
    return 0
