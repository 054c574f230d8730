"""`canter bench ga3c TASK [--minutes M] [--num-agents K] [--out DIR] [train flags]`: GA3C against
synchronous A2C on one task (canter.bench.ga3c)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from canter.cli.bench.output import stopped_exit_code, write_report
from canter.cli.flags import Task


@dataclass(kw_only=True)
class Ga3cArgs:
    """GA3C (agents, predictor and trainer threads, V-trace, run-time balancing) and synchronous A2C on TASK,
    each for the same wall time: PPS, TPS, policy lag, score against time. Any train flag and
    --env.* / --agent.* go to both."""

    PASS_THROUGH: ClassVar[str] = "train"
    task: Task = "cartpole"
    minutes: float = 5.0  # wall time of each side
    num_agents: int = 4  # GA3C's env batches (agent threads)
    dynamic: bool = True  # let GA3C balance its predictor and trainer counts
    a2c: bool = True  # also run synchronous A2C
    json: bool = False
    out: str | None = None  # write ga3c.json and ga3c.png into this directory

    def run(self, train_argv: list[str]) -> int:
        from rich.console import Console

        from canter.bench.ga3c import plot, run_a2c_and_ga3c
        from canter.core.errors import CanterError

        if not self.minutes > 0 or self.num_agents < 1:
            raise CanterError("bench ga3c: --minutes must be > 0 and --num-agents >= 1")
        console = Console(stderr=True)
        def log(line: str) -> None:  # progress on stderr, with or without --json (stdout stays the JSON)
            console.print(f"[dim]{line}[/dim]")

        result = run_a2c_and_ga3c(self.task, train_argv, self.minutes * 60.0, self.num_agents, self.dynamic,
                                  self.a2c, log)
        code = stopped_exit_code(result["stopped_by"])
        if result["stopped_by"] is not None:  # what ran is kept
            console.print(f"[yellow]stopped by {result['stopped_by']}: the figures cover what ran[/yellow]")
        if self.out is not None:
            write_report(Path(self.out) / "ga3c.json", result)
            plot(result["ga3c"], result["a2c"], self.task, Path(self.out) / "ga3c.png", result["seconds"])
        if self.json:
            print(json.dumps(result, indent=2))
            return code
        summary = result["summary"]
        console = Console()
        for side in ("ga3c", "a2c"):
            if math.isnan(summary[f"{side}_pps"]):
                continue
            extra = f", policy lag {summary['ga3c_policy_lag']:.2f} updates" if side == "ga3c" else ""
            console.print(f"{side.upper():5s} PPS {summary[f'{side}_pps']:9,.0f}  TPS {summary[f'{side}_tps']:6.2f}  "
                          f"return over the last third {summary[f'{side}_late_return']:.2f}{extra}")
        if summary["ga3c_threads"]:
            console.print("GA3C threads busy (average count): " + ", ".join(
                f"{name} {value:.2f}" for name, value in summary["ga3c_threads"].items()))
        return code
