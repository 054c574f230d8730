"""`canter bench sb3`: Canter vs Gymnasium Ant-v5 + Stable-Baselines3 PPO at equal wall time."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from canter.cli.bench.output import write_report


@dataclass(kw_only=True)
class Sb3Args:
    """Canter vs Gymnasium Ant-v5 + Stable-Baselines3 PPO at equal wall time (needs the [bench] extras).
    Further `canter train` options (e.g. --agent.algo.autocast bf16) go to Canter's side."""

    PASS_THROUGH: ClassVar[str] = "train"

    minutes: float = 3.0  # training wall time of each side
    canter_envs: int = 256  # the ant-classic task's default
    sb3_envs: int = 8
    seed: int = 0
    eval_episodes: int = 16
    out: str = "bench_out"  # writes sb3_<minutes>min.json and .png into this directory
    sb3: bool = True  # --no-sb3: Canter's side alone (its frames/s against the raw ceilings)
    json: bool = False

    def run(self, rest: list[str]) -> int:
        return sb3_main(self, rest)


def sb3_main(args: Sb3Args, train_argv: list[str] | None = None) -> int:
    """train_argv: `canter train` overrides for Canter's side (e.g. --agent.algo.autocast bf16)."""
    from rich.console import Console
    from rich.table import Table

    from canter.bench.sb3 import plot_compare, run_sb3_compare
    from canter.core.errors import CanterError

    if not args.minutes > 0:
        raise CanterError(f"--minutes: must be > 0, got {args.minutes:g}")
    for flag, value in (("--canter-envs", args.canter_envs), ("--sb3-envs", args.sb3_envs),
                        ("--eval-episodes", args.eval_episodes)):
        if value < 1:
            raise CanterError(f"{flag}: must be >= 1, got {value}")
    console = Console(stderr=True)
    result = run_sb3_compare(args.minutes, args.canter_envs, args.sb3_envs, args.seed, args.eval_episodes,
                             log=lambda m: console.print(f"[dim]{m}[/dim]"), sb3=args.sb3,
                             train_argv=train_argv).to_json()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stem = out / f"sb3_{args.minutes:g}min"
    write_report(stem.with_suffix(".json"), result)
    plot_compare(result, stem.with_suffix(".png"))
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    machine = result["machine"]
    table = Table(title=f"Ant, {args.minutes:g} min each, {machine['cpu']} ({machine['cores']} cores)", title_justify="left")
    for column in ("", "frames/s", "eval return (mean ± std)"):
        table.add_column(column, justify="right")
    canter = result["canter"]
    table.add_row("raw mujoco.batch.Batch, random controls, before", f"{result['raw_batch_steps_per_s']:,.0f}", "-")
    table.add_row("  the same, after training", f"{canter['raw_end_random_controls_steps_per_s']:,.0f}", "-")
    table.add_row("  on the trained ant's states", f"{canter['raw_end_policy_states_steps_per_s']:,.0f}", "-")
    for key, label in (("canter", f"Canter PPO, {args.canter_envs} envs"), ("sb3", f"SB3 PPO, {args.sb3_envs} envs")):
        r = result[key]
        if r is not None:
            table.add_row(label, f"{r['frames_per_s']:,.0f}", f"{r['eval_mean_return']:.1f} ± {r['eval_std_return']:.1f}")
    Console().print(table)
    speedup = "" if result["speedup_frames"] is None else f"Canter/SB3 frames: {result['speedup_frames']:.1f}x; "
    print(f"{speedup}Canter/raw: {result['canter_fraction_of_raw']:.2f} (before), "
          f"{result['canter_fraction_of_raw_end_random']:.2f} (after), "
          f"{result['canter_fraction_of_raw_policy_states']:.2f} (on the trained ant's states); wrote {stem}.json and {stem}.png")
    return 0
