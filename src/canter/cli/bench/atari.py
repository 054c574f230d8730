"""`canter bench atari --game pong --num-envs N [--json]`: Atari frames/s of the raw ale-py vector env,
Canter's env, Gymnasium's SyncVectorEnv of single envs, and torch-side preprocessing (canter.bench.atari)."""

from __future__ import annotations

from dataclasses import dataclass

from canter.cli.bench.output import emit


@dataclass(kw_only=True)
class AtariArgs:
    """Atari frames/s: raw ale-py vector env vs Canter's env vs Gymnasium's SyncVectorEnv (same game, same run)."""

    game: str = "pong"  # ale-py's ROM id (snake_case)
    num_envs: int = 64
    threads: int = 0  # emulator threads of the vector envs (0: all available cores)
    seconds: float = 3.0  # per repetition and side
    repeats: int = 3
    sync_vector: bool = True  # also time Gymnasium's SyncVectorEnv of single ALE envs
    torch_preprocess: bool = True  # also time resizing and stacking in torch
    seed: int = 0
    json: bool = False  # print the result as JSON instead of a table
    out: str | None = None  # a directory to write atari.json into

    def run(self, rest: list[str]) -> int:
        from rich.console import Console
        from rich.table import Table

        from canter.bench.atari import bench_atari

        result = bench_atari(self.game, self.num_envs, self.threads, self.seconds, self.repeats, self.sync_vector,
                             self.torch_preprocess, self.seed)
        if emit(result.to_dict(), self.out, "atari.json", self.json):
            return 0
        table = Table(title=f"{result.game}: {result.num_envs} envs, {result.threads} emulator threads, frame skip "
                      f"{result.frameskip}, median of {result.repeats}", title_justify="left")
        for column in ("", "frames/s", "vs raw"):
            table.add_column(column, justify="right")
        rows = [("(a) raw ale-py vector env", result.raw_frames_per_s),
                ("(b) Canter env (torch tensors)", result.canter_frames_per_s),
                ("(c) Gymnasium SyncVectorEnv", result.sync_vector_frames_per_s),
                ("(d) vector env + torch resize/stack", result.torch_preprocess_frames_per_s)]
        for name, value in rows:
            if value is not None:
                table.add_row(name, f"{value:,.0f}", f"{value / result.raw_frames_per_s:.2f}")
        Console().print(table)
        for side, why in result.skipped.items():
            Console().print(f"skipped {side}: {why}")
        if result.canter_vs_sync_vector is not None:
            Console().print(f"Canter env vs SyncVectorEnv: {result.canter_vs_sync_vector:.1f}x")
        return 0
