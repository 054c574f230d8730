"""`canter eval` and `canter play`: a trained run's policy, evaluated or watched."""

from __future__ import annotations

import contextlib
import json
import math
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch
from rich.console import Console

from canter.core.device import torch_threads
from canter.core.errors import CanterError, Interrupted
from canter.runs.load import load_run
from canter.runs.rundir import check_writable_file

PROGRESS_EVERY_S = 0.5  # how often evaluate() reports its episodes to a progress callback

if TYPE_CHECKING:
    from canter.cli.train_cmd import EvalArgs, PlayArgs
    from canter.rl.runner import OnPolicyRunner


def evaluate(runner: OnPolicyRunner, episodes: int, metrics=None, episode_metrics=None,
             per_episode: dict[str, torch.Tensor] | None = None,
             generator: torch.Generator | None = None,
             progress: Callable[[int, int, int], None] | None = None,
             stop: Callable[[], bool] | None = None) -> dict[str, float]:
    """Run the deterministic policy (or, given a `generator`, actions sampled from the policy with
    that generator's noise) until every env has finished its first ⌈episodes / num_envs⌉ episodes,
    and report those (at least `episodes`, the same number from every env); plus the mean
    over all evaluated steps and envs of each task metric (`metrics(env)` -> per-env tensors), and
    the mean, median and max over the counted episodes of each episode metric
    (`episode_metrics(env)` -> per-env tensors, read as each episode ends). A dict passed as
    `per_episode` receives one entry per counted episode: "env" (its env's index), "return",
    "length", "ending" (index of the first termination term that fired) and each episode metric.

    Taking the first episodes to end instead would favour short ones: with as many envs as
    episodes, a task whose successes end early and whose failures time out would count the second
    successes of fast envs in place of the slow envs' time-outs.

    progress(counted, total, env_steps): told the episodes counted so far and the env steps taken
    at most every PROGRESS_EVERY_S seconds, and once at the end.

    stop(): asked after every step; when it says yes the evaluation ends there and reports the
    episodes counted so far (an empty dict when none has ended). Those over-represent short episodes
    (the long ones under way are not counted), so a stopped evaluation's figures are partial."""
    env, policy = runner.env, runner.algorithm.policy
    per_env = -(-episodes // env.num_envs)
    total = per_env * env.num_envs
    told, env_steps = time.perf_counter(), 0
    obs, _ = env.reset()
    returns: list[torch.Tensor] = []
    lengths: list[torch.Tensor] = []
    metric_sums: dict[str, torch.Tensor] = {}
    endings: list[torch.Tensor] = []  # per counted episode: the index of the first termination term that fired
    at_end: dict[str, list[torch.Tensor]] = {}
    terminations = getattr(env, "termination_manager", None)
    finished = torch.zeros(env.num_envs, dtype=torch.long, device=env.device)  # episodes ended per env
    env_of: list[torch.Tensor] = []
    env_index = torch.arange(env.num_envs, device=env.device)
    steps = 0
    with torch.no_grad(), torch_threads(runner.rollout_threads):
        while bool((finished < per_env).any()):
            actions = policy.act_inference(obs) if generator is None else policy.act(obs, generator).actions
            obs, _, terminated, truncated, extras = env.step(actions)
            if metrics is not None:
                for name, value in metrics(env).items():
                    metric_sums[name] = metric_sums.get(name, 0.0) + value.double().mean()
                steps += 1
            policy.reset(terminated | truncated)
            done = extras.get("episode_end", terminated | truncated)
            counted = done & (finished < per_env)
            if bool(counted.any()):
                returns.append(extras["episode_return"][counted])
                env_of.append(env_index[counted])
                lengths.append(extras["episode_length"][counted])
                if terminations is not None:
                    endings.append(terminations.term_dones[:, counted].float().argmax(dim=0))
                if episode_metrics is not None:
                    for name, value in episode_metrics(env).items():
                        at_end.setdefault(name, []).append(value[counted].double())
            finished += done.long()
            env_steps += 1
            if progress is not None and time.perf_counter() - told >= PROGRESS_EVERY_S:
                progress(int(finished.clamp(max=per_env).sum()), total, env_steps)
                told = time.perf_counter()
            if stop is not None and stop():
                break
    if not returns:  # stopped before any episode ended
        return {}
    if progress is not None:
        progress(int(finished.clamp(max=per_env).sum()), total, env_steps)
    r = torch.cat(returns).double()
    n = torch.cat(lengths).double()
    result = {"episodes": float(r.numel()), "mean_return": float(r.mean()), "std_return": float(r.std(unbiased=False)),
              "min_return": float(r.min()), "max_episode_return": float(r.max()), "mean_episode_length": float(n.mean())}
    result.update({name: float(total) / steps for name, total in metric_sums.items()})
    for name, parts in at_end.items():
        values = torch.cat(parts)
        result.update({f"{name}_mean": float(values.mean()), f"{name}_median": float(values.median()),
                       f"{name}_max": float(values.max())})
    if terminations is not None:  # the share of episodes each termination term ended (success, time-out, ...)
        first = torch.cat(endings)
        result.update({f"ended_by_{name}": float((first == k).double().mean()) for k, name in enumerate(terminations.names)})
    if per_episode is not None:
        per_episode.update({"env": torch.cat(env_of).cpu(), "return": r.cpu(), "length": n.cpu()})
        if terminations is not None:
            per_episode["ending"] = torch.cat(endings).cpu()
        per_episode.update({name: torch.cat(parts).cpu() for name, parts in at_end.items()})
    return result


def eval_main(args: EvalArgs) -> int:
    from canter.cli.terrain_report import check_terrain_flags, grid_report, pin_terrain, plot_grid
    from canter.tasks import REGISTRY

    if args.episodes < 1:
        raise CanterError("--episodes must be >= 1")
    if args.episode_length_s is not None and not (math.isfinite(args.episode_length_s) and args.episode_length_s > 0):
        raise CanterError(f"--episode-length-s: need seconds > 0, got {args.episode_length_s}")
    check_terrain_flags(args.terrain_level, args.sub_terrain, args.terrain_grid)
    if args.plot is not None:
        if not args.terrain_grid:
            raise CanterError("--plot: draws the --terrain-grid report; add --terrain-grid")
        check_writable_file(Path(args.plot))
    command, train_args, runner = load_run(args.run_dir, args.num_envs, args.checkpoint, photos=args.photos,
                                             velocity=args.command, task=args.task)
    pin_terrain(runner.env, args.terrain_level, args.sub_terrain, args.terrain_grid)
    if args.episode_length_s is not None:
        set_length = getattr(runner.env, "set_episode_length", None)
        if set_length is None:
            raise CanterError(f"--episode-length-s: task {train_args.task!r} has no episode length in seconds")
        set_length(args.episode_length_s)
    task = train_args.task
    spec = REGISTRY.get(task)
    scoring = getattr(runner.env, "evaluation", None)
    if scoring is not None:  # an env with training-only aids turns them off (Atari: unclipped game scores)
        scoring()
    if args.terrain_grid and "walked_out" not in (spec.episode_metrics(runner.env) if spec.episode_metrics else {}):
        raise CanterError(f"--terrain-grid: task {task!r} reports no distance walked (it has no terrain curriculum)")
    per_episode: dict[str, torch.Tensor] = {}
    # --stochastic: the policy's own noise, from a fixed seed so that a repeat gives the same episodes
    generator = torch.Generator(device=runner.env.device).manual_seed(0) if args.stochastic else None
    # Ctrl-C, SIGTERM or SIGHUP: stop after the step under way and report the episodes that ended so far,
    # marked as partial; a second Ctrl-C stops at once
    with _episodes_bar(f"eval {task}") as progress, runner.stop_signals():
        result: dict[str, Any] = evaluate(runner, args.episodes, spec.metrics, spec.episode_metrics, per_episode,
                                          generator, progress, stop=lambda: runner.received_signal is not None)
        stopped = runner.received_signal  # (stop_signals forgets it on leaving)
    if stopped is not None and not result:  # nothing ended yet: nothing to report
        raise Interrupted(int(stopped))
    if stopped is not None:
        result["interrupted"] = stopped.name
        result["episodes_requested"] = args.episodes
    result["stochastic"] = args.stochastic
    result["max_return"] = spec.max_return if spec.max_return is not None else float("nan")
    result["task"] = task
    if task != command.task:
        result["policy_task"] = command.task
    if args.terrain_level is not None:
        result["terrain_level"] = args.terrain_level
        result["sub_terrain"] = args.sub_terrain
    if args.command is not None:
        result["command"] = list(args.command)
    if args.terrain_grid:
        result["terrain_grid"] = grid_report(runner.env, per_episode)
    if args.json:
        print(json.dumps(_nan_to_none(result), indent=2))
    else:
        _print_result(result, args, spec)
    if args.plot is not None:  # after the figures are out: a plot that cannot be written loses nothing
        try:
            plot_grid(result["terrain_grid"], Path(args.plot), f"{task}: {args.run_dir}, {int(result['episodes'])} episodes")
        except OSError as err:
            raise CanterError(f"--plot: cannot write {args.plot}: {err.strerror or err}") from None
        if not args.json:
            Console().print(f"heat map: {args.plot}", soft_wrap=True)
    if stopped is not None:
        raise Interrupted(int(stopped))
    return 0


@contextlib.contextmanager
def _episodes_bar(title: str) -> Iterator[Callable[[int, int, int], None]]:
    """A progress bar of episodes on stderr while evaluate() runs (gone when it ends; nothing where
    stderr is not a terminal), so stdout stays the result (--json)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    console = Console(stderr=True)
    if not console.is_terminal:  # a log or a pipe: no bar, not even the blank line a live display leaves
        yield lambda counted, total, env_steps: None
        return
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("episodes"),
                  TimeElapsedColumn(), console=console, transient=True) as bar:
        task_id = bar.add_task(title, total=None)

        def update(counted: int, total: int, env_steps: int) -> None:
            bar.update(task_id, completed=counted, total=total, description=f"{title}, step {env_steps:,}")

        yield update


def _print_result(result: dict[str, Any], args: EvalArgs, spec: Any) -> None:
    task = result["task"]
    console = Console()
    if "interrupted" in result:
        console.print(f"interrupted by {result['interrupted']} after {int(result['episodes'])} of "
                      f"{result['episodes_requested']} episodes: the figures below are of those alone, and "
                      "short episodes are over-represented (longer ones were still under way)")
    if "policy_task" in result:
        console.print(f"a {result['policy_task']} policy acting in {task}'s env")
    console.print(f"{task}: {int(result['episodes'])} episodes, return {result['mean_return']:.3f} ± {result['std_return']:.3f}"
                  + (f" (best possible {spec.max_return:g})" if spec.max_return is not None else "")
                  + f", episode length {result['mean_episode_length']:.1f} steps")
    if args.stochastic:
        console.print("  actions sampled from the policy (--stochastic), not its deterministic action")
    if args.terrain_level is not None:
        console.print(f"  every env on terrain level {args.terrain_level}"
                      + (f", {args.sub_terrain} blocks" if args.sub_terrain else ""))
    if args.command is not None:
        console.print("  every env commanded vx {:.2f} m/s, vy {:.2f} m/s, wz {:.2f} rad/s".format(*args.command))
    for name in sorted(set(result) - {"episodes", "mean_return", "std_return", "min_return", "max_episode_return",
                                      "mean_episode_length", "max_return", "task", "terrain_level", "sub_terrain",
                                      "terrain_grid", "command", "policy_task", "stochastic", "interrupted",
                                      "episodes_requested"}):
        console.print(f"  {name}: {result[name]:.4f}")
    if args.terrain_grid:
        from canter.cli.terrain_report import print_grid

        print_grid(result["terrain_grid"], console)


def _nan_to_none(value: Any) -> Any:
    """JSON has no NaN: None in its place, through nested dicts and lists."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: _nan_to_none(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_nan_to_none(v) for v in value]
    return value


def check_offscreen_gl() -> None:
    """One line (CanterError) if MuJoCo's offscreen rendering cannot load under MUJOCO_GL (chosen by
    the entry point for the commands that film: play --video, deploy run --video)."""
    try:
        import mujoco  # noqa: F401 - with MUJOCO_GL set, this loads the GL library
    except Exception as err:
        raise CanterError(f"offscreen rendering is unavailable with MUJOCO_GL={os.environ.get('MUJOCO_GL')} "
                          f"({type(err).__name__}: {' '.join(str(err).split())[:120]}); install its library "
                          "(libegl1 for egl, libosmesa6 for osmesa) or choose another MUJOCO_GL") from None


def play_main(args: PlayArgs) -> int:
    from canter.cli.terrain_report import check_terrain_flags, pin_terrain

    check_terrain_flags(args.terrain_level, args.sub_terrain)
    for flag, value in (("--steps", args.steps), ("--width", args.width), ("--height", args.height)):
        if value is not None and value < 1:
            raise CanterError(f"{flag}: must be >= 1, got {value}")
    if args.strip and not args.video:
        raise CanterError("--strip: needs --video (the strip is made of the video's frames)")
    if args.camera is not None and not args.video:
        raise CanterError("--camera: needs --video (the camera films the video; without one nothing is rendered)")
    if args.video:
        check_writable_file(Path(args.video))
        if args.strip:
            check_writable_file(Path(args.strip))
        check_offscreen_gl()

    _, _, runner = load_run(args.run_dir, args.num_envs, args.checkpoint, photos=args.photos,
                            velocity=args.command, task=args.task)
    env, policy = runner.env, runner.algorithm.policy
    pin_terrain(env, args.terrain_level, args.sub_terrain)
    steps = args.steps or env.max_episode_length
    scoring = getattr(env, "evaluation", None)
    if scoring is not None:  # training-only aids off (Atari: whole games, unclipped scores)
        scoring()
    recorder = None
    if args.video:
        from canter.cli.video import STRIP_FRAMES, recorder_for, write_frame_strip

        recorder = recorder_for(env, args.video, args.width, args.height, args.camera)
        recorder.keep_every = max(1, steps // STRIP_FRAMES) if args.strip else 0
    obs, _ = env.reset()
    total = torch.zeros(env.num_envs)
    finished: list[float] = []
    console = Console()
    played, stopped = 0, None
    try:
        # Ctrl-C, SIGTERM or SIGHUP: stop after the step under way, the frames so far a playable video;
        # a second Ctrl-C stops at once (KeyboardInterrupt, below)
        with torch.no_grad(), torch_threads(runner.rollout_threads), runner.stop_signals():
            for _ in range(steps):
                obs, reward, terminated, truncated, extras = env.step(policy.act_inference(obs))
                policy.reset(terminated | truncated)
                done = extras.get("episode_end", terminated | truncated)
                total += reward.cpu()
                finished += extras["episode_return"][done].tolist()
                if recorder is not None:
                    recorder.capture()
                played += 1
                stopped = runner.received_signal
                if stopped is not None:
                    break
    except KeyboardInterrupt:  # the frames so far stay a playable video, and the line says where
        if recorder is not None:
            console.print(f"video so far: {recorder.close()} ({recorder.frames} frames at {recorder.fps:.0f} fps)", soft_wrap=True)
        raise
    except BaseException:  # a play that failed leaves the video already at --video (if any) as it was
        if recorder is not None:
            recorder.discard()
        raise
    if recorder is not None:
        path = recorder.close()
        console.print(f"{'video so far' if stopped else 'video'}: {path} ({recorder.frames} frames at {recorder.fps:.0f} fps)",
                      soft_wrap=True)
        if args.strip:
            console.print(f"frame strip: {write_frame_strip(recorder.kept, Path(args.strip))}")
    head = f"played {played} steps x {env.num_envs} envs: "
    if finished:
        console.print(f"{head}{len(finished)} episodes ended, mean return {sum(finished) / len(finished):.3f}")
    else:
        console.print(f"{head}no episode ended; return so far {float(total.mean()):.3f} (mean over envs)")
    if stopped is not None:
        raise Interrupted(int(stopped))
    return 0
