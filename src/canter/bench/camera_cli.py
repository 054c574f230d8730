"""Arguments and entry point of `canter bench camera` (the CLI tree calls `main(argv)`).

    python -m canter.bench.camera_cli --model src/canter/assets/camera_table.xml --num-envs 256 \
        --resolution 64 --json
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass

import tyro
from rich.console import Console
from rich.table import Table

from canter.bench.camera import CameraBenchCfg, CameraBenchResult, result_path, run_camera_bench
from canter.core.errors import CanterError


@dataclass(kw_only=True)
class CameraBenchArgs(CameraBenchCfg):
    json: bool = False  # print the result as JSON instead of a table
    out: str | None = None  # a directory to write camera.json into


def _table(result: CameraBenchResult) -> Table:
    table = Table(
        title=f"{result.source} / camera {result.camera!r}: {result.num_envs} envs, {result.width}x{result.height} "
        f"{'+'.join(result.outputs)}, backend {result.backend}, {result.threads} threads",
        title_justify="left",
    )
    for column in ("", "median", "min", "max"):
        table.add_column(column, justify="right")
    table.add_row(
        f"batched camera ({result.camera_path}), images/s",
        f"{result.images_per_s:,.0f}",
        f"{result.images_per_s_min:,.0f}",
        f"{result.images_per_s_max:,.0f}",
    )
    if result.batch_ray_images_per_s is not None:
        table.add_row("same camera via Batch.ray, images/s", f"{result.batch_ray_images_per_s:,.0f}", "", "")
    if result.renderer_loop_images_per_s is not None:
        table.add_row(
            f"mujoco.Renderer per env ({result.renderer_gl}), images/s",
            f"{result.renderer_loop_images_per_s:,.0f}",
            f"{result.renderer_loop_images_per_s_min:,.0f}",
            f"{result.renderer_loop_images_per_s_max:,.0f}",
        )
        table.add_row("ratio", f"{result.ratio:.2f}", "", "")
    loop_cpu = result.renderer_loop_images_per_cpu_s
    table.add_row(
        "images per CPU-second: camera / renderer loop",
        f"{result.images_per_cpu_s:,.0f} / {'-' if loop_cpu is None else f'{loop_cpu:,.0f}'}",
        "",
        "",
    )
    table.add_row("camera share of env step", f"{result.camera_share_of_step:.1%}", "", "")
    table.add_row("camera / step per env step (ms)", f"{result.camera_ms:.1f} / {result.step_ms:.1f}", "", "")
    return table


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; print a table (or JSON) and write camera.json under --out."""
    args = tyro.cli(
        CameraBenchArgs,
        args=list(sys.argv[1:] if argv is None else argv),
        prog="canter bench camera",
        description="Batched camera images/s vs a per-env mujoco.Renderer loop, and the camera's share of the step.",
    )
    console = Console(stderr=True)
    console.print(
        f"[bold]bench camera[/bold] {args.task or args.model} num_envs={args.num_envs} "
        f"resolution={args.resolution} backend={args.backend} ({args.repeats} x {args.seconds:.1f} s per side)"
    )
    result = run_camera_bench(args, progress=lambda line: console.print(f"[dim]{line}[/dim]"))
    if result.renderer_error is not None:
        console.print(f"[yellow]{result.renderer_error}[/yellow]")
    if args.out is not None:
        path = result_path(args.out)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(result.to_dict(), indent=2) + "\n")
    if args.json:
        print(json.dumps(result.to_dict(), indent=2))
    else:
        Console().print(_table(result))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except CanterError as err:
        print(f"canter: error: {err}", file=sys.stderr)
        sys.exit(2)
