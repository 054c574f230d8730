"""`canter bench stones` (success per difficulty level, heuristic vs RL + QP) and
`canter bench stones-cost` (env step FPS with and without the QP, solver share)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from canter.cli.bench.output import write_report
from canter.core.files import write_text_atomic


@dataclass(kw_only=True)
class StonesArgs:
    """Success rate per stepping-stone level: heuristic controller vs a dog-stones RL + QP run."""

    run_dir: str | None = None  # a dog-stones training run; without it only the heuristic is evaluated
    checkpoint: str | None = None  # default: RUN_DIR/checkpoint.pt
    episodes: int = 20  # episodes per level (one env each)
    levels: tuple[int, ...] = ()  # default: every row of the terrain
    out: str = "bench_out"  # writes stones.json, stones.md and stones.png into this directory
    json: bool = False

    def run(self, rest: list[str]) -> int:
        return stones_main(self)


@dataclass(kw_only=True)
class StonesCostArgs:
    """dog-stones env step FPS with the QP body controller vs an even force split, and the solver's share."""

    num_envs: int = 256
    steps: int = 50  # env steps timed per variant (after one warm-up step)
    out: str = "bench_out"  # writes stones_cost.json into this directory
    json: bool = False

    def run(self, rest: list[str]) -> int:
        return stones_cost_main(self)


def stones_main(args: StonesArgs) -> int:
    from rich.console import Console

    from canter.bench.stones import evaluate_stones, plot_stones, stones_markdown

    console = Console(stderr=True)
    result = evaluate_stones(args.run_dir, list(args.levels), args.episodes, args.checkpoint,
                             log=lambda m: console.print(f"[dim]{m}[/dim]"))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    table = stones_markdown(result)
    write_report(out / "stones.json", result.to_json())
    write_text_atomic(out / "stones.md", table + "\n")
    plot_stones(result, out / "stones.png")
    if args.json:
        print(json.dumps(result.to_json(), indent=2))
        return 0
    print(table)
    print(f"wrote {out / 'stones.json'}, {out / 'stones.md'}, {out / 'stones.png'}  commit {result.machine['commit']}")
    return 0


def stones_cost_main(args: StonesCostArgs) -> int:
    from rich.console import Console
    from rich.table import Table

    from canter.bench.stones import measure_cost

    console = Console(stderr=True)
    result = measure_cost(args.num_envs, args.steps, log=lambda m: console.print(f"[dim]{m}[/dim]"))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write_report(out / "stones_cost.json", result.to_json())
    if args.json:
        print(json.dumps(result.to_json(), indent=2))
        return 0
    table = Table(title=f"dog-stones, {args.num_envs} envs, {result.qp.ticks_per_env_step} controller ticks per env step",
                  title_justify="left")
    for column in ("stance forces", "env steps/s", "controller share", "solver share"):
        table.add_column(column, justify="right")
    for row, label in ((result.qp, "GRF QP"), (result.static, "even split (no QP)")):
        table.add_row(label, f"{row.env_steps_per_s:,.0f}", f"{row.controller_share:.1%}", f"{row.solver_share:.1%}")
    Console().print(table)
    print(f"QP slowdown: {result.qp_slowdown:.2f}x  cpu: {result.machine['cpu']}  commit {result.machine['commit']}")
    return 0
