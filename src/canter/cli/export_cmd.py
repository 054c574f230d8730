"""`canter export RUN_DIR` and `canter deploy run POLICY`."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import tyro

from canter.cli.flags import OptionalTask
from canter.core.errors import CanterError, Interrupted


@dataclass(kw_only=True)
class ExportArgs:
    """Export a trained policy (actor + observation normalizer) to ONNX or TorchScript with its metadata."""

    run_dir: tyro.conf.Positional[str]
    format: Literal["onnx", "torchscript"] = "onnx"
    quantize: Literal["int8"] | None = None  # dynamic int8 weights; reports the max action error vs fp32
    out: str | None = None  # a directory; default: RUN_DIR/exported (file policy[.int8].onnx|.pt)
    checkpoint: str | None = None  # default: RUN_DIR/checkpoint.pt
    record_steps: int = 100  # env steps of recorded observations for the parity checks
    record_envs: int = 16

    def run(self, rest: list[str]) -> int:
        return export_main(self)


def export_main(args: ExportArgs) -> int:
    from rich.console import Console

    from canter.envs.atari import AtariEnv
    from canter.envs.manager_env import ManagerBasedRLEnv
    from canter.export.exporter import SUFFIX, export_policy
    from canter.runs.load import load_run
    from canter.runs.rundir import check_writable_file

    if args.record_steps < 1 or args.record_envs < 1:
        raise CanterError("--record-steps and --record-envs must be >= 1")
    stem = "policy" + (".int8" if args.quantize else "")
    out = (Path(args.out) if args.out else Path(args.run_dir) / "exported") / (stem + SUFFIX[args.format])
    if Path(args.run_dir).is_dir():
        check_writable_file(out)
    command, run_args, runner = load_run(args.run_dir, args.record_envs, args.checkpoint)
    task = command.task
    env = runner.env
    if not isinstance(env, ManagerBasedRLEnv | AtariEnv):
        raise CanterError(f"export: task {task!r}'s env ({type(env).__name__}) is neither a MuJoCo robot's nor an Atari game's")
    report = export_policy(env, runner.algorithm.policy, task, fmt=args.format, out=out, quantize=args.quantize,
                           record_steps=args.record_steps, seed=run_args.seed)
    console = Console()
    md = report.metadata
    reads = (f"frames {'x'.join(map(str, md.image_inputs[0]['shape']))} -> {md.action_dim} logits of "
             f"{md.game['rom']}'s actions" if md.game is not None else f"{md.observation_dim} obs -> {md.action_dim} actions")
    console.print(f"[bold]canter export[/bold] {task} ({md.architecture}, {reads}, {md.control_frequency_hz:g} Hz, "
                  f"normalizer {md.normalizer}) -> [cyan]{out}[/cyan]", soft_wrap=True)
    for precision, errors in report.errors.items():
        shown = ", ".join(f"{name} {value:.2e}" for name, value in errors.items())
        against = "torch policy" if precision == "fp32" else "fp32 export"
        console.print(f"  {precision}: max |Δaction| vs {against}: {shown}")
    if report.int8_choice_agreement is not None:
        console.print(f"  int8: the greedy action is fp32's on {100 * report.int8_choice_agreement:.1f} % of the recorded steps")
    console.print(f"  actions on the recorded observations reach |a| = {report.max_abs_action:.3g}")
    console.print(f"  report: {out.name}.json")
    return 0


@dataclass(kw_only=True)
class DeployCmd:
    """`deploy run POLICY [TASK]`: run an exported policy in a fixed-rate real-time loop against a simulated robot
    (an Atari policy: against ale-py's emulator, at the game's pace)."""

    action: tyro.conf.Positional[Literal["run"]]
    policy: tyro.conf.Positional[str]  # an exported .onnx file
    task: OptionalTask = None  # the simulated robot's (or game's) task (default: the policy's)
    rate: float | None = None  # loop rate, Hz (default: the policy's control frequency)
    duration: float | None = None  # seconds of wall time (default 10; with --episodes: until they have ended)
    episodes: int | None = None  # stop once this many episodes have ended
    unpaced: bool = False  # ticks back to back instead of at --rate (physics still 1/rate per tick): a score, no timing
    spin_us: float = 200.0  # busy-wait this long before each tick instead of sleeping
    seed: int = 0
    photos: str | None = None  # tasks with photo backgrounds: "train", "unseen" (never trained on) or a folder of yours
    command: tuple[float, float, float] | None = None  # velocity tasks: hold (vx, vy, wz), m/s and rad/s
    json: bool = False
    out: str | None = None  # also write the result JSON (deploy.json) into this directory
    # film the stand-in (env 0's camera; an Atari game's frames) into this mp4; rendered between ticks,
    # outside the measured work, but at a high --rate it can make ticks late (--unpaced has no deadlines)
    video: str | None = None
    camera: str | None = None  # with --video: a camera of the robot's model (default: its first, else the free camera)
    width: int = 640  # with --video: frame size of a MuJoCo video, pixels
    height: int = 480

    def run(self, rest: list[str]) -> int:
        return deploy_main(self)


def deploy_main(args: DeployCmd) -> int:
    from rich.console import Console

    from canter.core.signals import catch_stop_signals
    from canter.export.realtime import RealtimeCfg, run_realtime, stand_in
    from canter.export.runtime import PolicyRuntime

    if args.video is None and args.camera is not None:
        raise CanterError("--camera: needs --video (the camera films the video; without one nothing is rendered)")
    if args.video is not None:
        from canter.cli.play_eval import check_offscreen_gl
        from canter.runs.rundir import check_writable_file

        if args.width < 1 or args.height < 1:
            raise CanterError(f"--width/--height: must be >= 1, got {args.width}x{args.height}")
        check_writable_file(Path(args.video))
        check_offscreen_gl()
    cfg = RealtimeCfg(rate_hz=args.rate, duration_s=args.duration, episodes=args.episodes, paced=not args.unpaced,
                      spin_us=args.spin_us, seed=args.seed, photos=args.photos, command=args.command)
    runtime = PolicyRuntime(args.policy)
    task = args.task or runtime.metadata.task
    console = Console(stderr=True)
    rate = cfg.rate_hz or runtime.metadata.control_frequency_hz
    limit, wanted = cfg.wall_limit_s, f"until {cfg.episodes} episodes have ended"
    until = (wanted if limit is None else f"for {limit:g} s" if cfg.episodes is None
             else f"for at most {limit:g} s or {wanted}")
    console.print(f"[bold]canter deploy run[/bold] {args.policy}: task {task}, {rate:g} Hz{'' if cfg.paced else ' unpaced'} "
                  f"{until} ({runtime.metadata.architecture}, {runtime.metadata.quantization})")
    if abs(rate - runtime.metadata.control_frequency_hz) > 1e-6:
        console.print(f"[yellow]note: the policy was trained at {runtime.metadata.control_frequency_hz:g} Hz[/yellow]")
    robot = stand_in(runtime, task, rate, cfg)
    recorder = None
    if args.video is not None:
        from canter.cli.video import recorder_for

        recorder = recorder_for(robot.env, args.video, args.width, args.height, args.camera)
    if recorder is not None and cfg.paced:
        console.print("[yellow]note: frames are rendered between ticks; where that takes longer than a period, ticks are "
                      "late (deadline misses): --unpaced films without deadlines[/yellow]")
    # Ctrl-C, SIGTERM or SIGHUP: stop after the tick under way and report the ticks so far (and keep
    # the video so far); a second Ctrl-C stops at once, the video so far still playable
    try:
        with catch_stop_signals() as received:
            result = run_realtime(runtime, task, cfg, lambda line: console.print(f"[dim]{line}[/dim]"), robot=robot,
                                  after_tick=None if recorder is None else recorder.capture,
                                  should_stop=lambda: bool(received))
    except KeyboardInterrupt:
        if recorder is not None:
            console.print(f"video so far: {recorder.close()} ({recorder.frames} frames at {recorder.fps:.0f} fps)", soft_wrap=True)
        raise
    except BaseException:  # a failed run leaves the video already at --video (if any) as it was
        if recorder is not None:
            recorder.discard()
        raise
    result["stopped_by"] = received[0].name if received else None
    result["video"] = None
    if recorder is not None:
        result["video"] = str(recorder.close())
        console.print(f"{'video so far' if received else 'video'}: {result['video']} ({recorder.frames} frames at "
                      f"{recorder.fps:.0f} fps)", soft_wrap=True)
    if args.out:
        from canter.cli.bench.output import write_report

        write_report(Path(args.out) / "deploy.json", result)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        _print_result(result)
    if received:
        raise Interrupted(int(received[0]))
    return 0


def _print_result(result: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    paced = result["paced"]
    table = Table(title=f"{result['task']} at {result['rate_hz']:g} Hz{'' if paced else ' unpaced'}: {result['ticks']} "
                        f"ticks in {result['duration_s']:.1f} s", title_justify="left")
    for column in ("µs", "p50", "p99", "max"):
        table.add_column(column, justify="right")
    for key, label in (("inference_us", "inference"), ("work_us", "read + infer + write"),
                       ("period_jitter_us", "period jitter")):
        if result[key] is not None:
            table.add_row(label, *(f"{result[key][q]:,.1f}" for q in ("p50", "p99", "max")))
    Console().print(table)
    mean = result["mean_episode_return"]
    check = result["ctrl_max_abs_diff"]
    counts = {name: result["episode_endings"].count(name) for name in result["ended_by"]}
    ended = f" (ended by {', '.join(f'{name} {n}' for name, n in counts.items())})" if counts else ""
    timing = (f"deadline misses: {result['deadline_misses']} of {result['ticks']} ticks (skipped ticks "
              f"{result['skipped_ticks']}); " if paced else "unpaced: no deadlines; ")
    print(f"{timing}episodes: {result['episodes']}{ended}, mean return {'-' if mean is None else f'{mean:.3f}'}, "
          f"unfinished episode {result['unfinished_episode_return']:.3f}; "
          + (f"ctrl check {check:.1e}" if check is not None else f"ctrl check {result['ctrl_check']}"))
