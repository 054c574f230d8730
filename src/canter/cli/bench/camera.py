"""`canter bench camera`: batched camera images/s vs a per-env mujoco.Renderer loop, and the camera's
share of the env step (canter.bench.camera)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Literal

from canter.cli.bench.output import write_report
from canter.cli.flags import OptionalTask

if TYPE_CHECKING:
    from rich.table import Table

    from canter.bench.camera import CameraBenchResult


@dataclass(kw_only=True)
class CameraArgs:
    """Batched camera images/s (cpu: ray casting; warp: MuJoCo Warp's renderer) vs mujoco.Renderer env by env."""

    task: OptionalTask = None  # a registered task whose scene is rendered (or --model)
    model: str | None = None  # a bare MJCF model instead of a task
    camera: str | None = None  # the MJCF camera (default: the model's first camera)
    num_envs: int = 256
    resolution: int = 64  # square images, pixels per side
    outputs: tuple[Literal["depth", "rgb", "segmentation"], ...] = ("depth",)
    backend: str = "cpu"
    device: str = "cpu"
    threads: int = 0  # MuJoCo's thread pool (0: all available cores)
    decimation: int = 10  # physics substeps per env step for a bare model
    seconds: float = 1.0  # per repetition and side
    repeats: int = 5
    renderer_loop: bool = True  # also time the per-env mujoco.Renderer loop
    seed: int = 0
    json: bool = False  # print the result as JSON instead of a table
    out: str | None = None  # a directory to write camera.json into

    def run(self, rest: list[str]) -> int:
        return camera_main(self)


def _table(result: CameraBenchResult) -> Table:
    from rich.table import Table

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


def camera_main(args: CameraArgs) -> int:
    """Run the benchmark; print a table (or JSON) and write camera.json under --out."""
    from rich.console import Console

    from canter.bench.camera import CameraBenchCfg, result_path, run_camera_bench

    cfg = CameraBenchCfg(**{k: v for k, v in asdict(args).items() if k not in ("json", "out")})
    console = Console(stderr=True)
    console.print(f"[bold]bench camera[/bold] {args.task or args.model} num_envs={args.num_envs} "
                  f"resolution={args.resolution} backend={args.backend} ({args.repeats} x {args.seconds:.1f} s per side)")
    result = run_camera_bench(cfg, progress=lambda line: console.print(f"[dim]{line}[/dim]"))
    if result.renderer_error is not None:
        console.print(f"[yellow]{result.renderer_error}[/yellow]")
    if args.out is not None:
        path = result_path(args.out)
        write_report(path, result.to_dict())
    if args.json:
        print(json.dumps(result.to_dict(), indent=2))
    else:
        Console().print(_table(result))
    return 0
