"""`canter train`, `canter play` and `canter eval`."""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass
from pathlib import Path

import torch
import tyro
from rich.console import Console

from canter.cli.launch import free_port, launch
from canter.cli.session import (
    COMMAND_FILE,
    TrainArgs,
    init_rank,
    make_env,
    make_rank_env,
    new_run_dir,
    parse_train_args,
    pop_flag,
    read_command,
    strip_flags,
    write_run_files,
)
from canter.core.device import torch_threads
from canter.core.errors import CanterError
from canter.envs.manager_env import ManagerBasedRLEnv
from canter.rl.checkpoint import load_checkpoint
from canter.rl.distributed import broadcast_object, launched_world_size, shutdown
from canter.rl.logger import Logger
from canter.rl.runner import CHECKPOINT, OnPolicyRunner
from canter.tasks import REGISTRY

TRAIN_USAGE = """usage: canter train TASK [--num-envs N] [--device cpu|cuda] [--backend cpu|warp] [--seed S]
                    [--max-iterations K] [--max-time SECONDS] [--run-dir DIR] [--algo ppo|a2c]
                    [--model MJCF] [--nproc P] [--dist-timeout SECONDS]
                    [--env.FIELD VALUE ...] [--agent.FIELD VALUE ...]
       canter train --resume RUN_DIR [--nproc P] [--max-iterations K] [--max-time SECONDS]
--nproc P trains with P processes on this machine (torch.distributed, started by torchrun's launcher);
--num-envs is then the total over processes. Several machines: torchrun ... -m canter.train TASK ...
tasks: {tasks}.  `canter train TASK --help` lists every field of that task's configs."""


def _resume_argv(argv: list[str]) -> tuple[str, list[str], Path]:
    """Task and arguments of the run being resumed, with this call's budget flags on top."""
    index = next(i for i, a in enumerate(argv) if a.split("=", 1)[0] == "--resume")
    token = argv[index]
    if "=" in token:
        run_dir = Path(token.split("=", 1)[1])
    elif index + 1 < len(argv):
        run_dir = Path(argv[index + 1])
    else:
        raise CanterError("--resume needs a run directory")
    task, saved = read_command(run_dir)
    if argv and not argv[0].startswith("-") and argv[0] != task:
        raise CanterError(f"{run_dir} is a {task!r} run, not {argv[0]!r}")
    budget_flags = ("--max-iterations", "--max-time")
    rest = argv[1:] if argv and not argv[0].startswith("-") else argv
    budget = [a for a in strip_flags(rest, ("--resume",)) if a]
    kept_budget = [t for i, t in enumerate(budget) if t.split("=", 1)[0] in budget_flags or (i > 0 and budget[i - 1] in budget_flags)]
    merged = strip_flags(saved, (*budget_flags, "--resume", "--run-dir")) + kept_budget
    return task, merged, run_dir


def train_main(argv: list[str]) -> int:
    """`canter train`: in this process, or with --nproc N > 1 as N ranks started by torchrun's
    launcher, each running `python -m canter.train` with the same arguments."""
    if not argv or argv[0] in ("-h", "--help"):
        print(TRAIN_USAGE.format(tasks=", ".join(REGISTRY.names())))
        return 0
    argv = list(argv)
    nproc_text = pop_flag(argv, "--nproc", None)
    nproc = _positive_int("--nproc", nproc_text) if nproc_text is not None else 1
    if nproc > 1:
        if launched_world_size() > 1:
            raise CanterError("--nproc: this process is already one rank of a torchrun launch")
        return launch_training(argv, nproc)
    return run_training(argv)


def launch_training(argv: list[str], nproc: int) -> int:
    """Checks the arguments here (one-line errors before any process starts), fixes the run directory,
    and runs `python -m canter.train ARGV` on nproc ranks (canter.cli.launch)."""
    console = Console()
    if any(a.split("=", 1)[0] == "--resume" for a in argv):
        task, argv_used, run_dir = _resume_argv(argv)
        parse_train_args(task, argv_used)
        if not (run_dir / CHECKPOINT).is_file():
            raise CanterError(f"cannot resume: no {CHECKPOINT} in {run_dir}")
        rank_argv = argv
    else:
        task = argv[0]
        if task.startswith("-"):
            raise CanterError("missing TASK: canter train TASK [options]")
        args = parse_train_args(task, argv[1:])
        run_dir = Path(args.run_dir) if args.run_dir else Path("runs") / f"{task}-{time.strftime('%Y%m%d-%H%M%S')}"
        if run_dir.exists() and any(run_dir.iterdir()):
            raise CanterError(f"run directory {run_dir} exists and is not empty (use --resume {run_dir} to continue it)")
        rank_argv = [task, *strip_flags(argv[1:], ("--run-dir",)), "--run-dir", str(run_dir)]
    port = free_port()
    console.print(f"[bold]canter train[/bold]: {nproc} processes on this machine (torchrun, port {port})")
    launch("canter.train", rank_argv, nproc, port=port)
    return 0


def run_training(argv: list[str]) -> int:
    """Trains in this process: alone, or as one rank of a torchrun launch (rank 0 logs and saves)."""
    resume = any(a.split("=", 1)[0] == "--resume" for a in argv)
    run_dir = Path()
    if resume:
        task, argv_used, run_dir = _resume_argv(argv)
        args = parse_train_args(task, argv_used)
        if not (run_dir / CHECKPOINT).is_file():
            raise CanterError(f"cannot resume: no {CHECKPOINT} in {run_dir}")
    else:
        task, argv_used = argv[0], argv[1:]
        if task.startswith("-"):
            raise CanterError("missing TASK: canter train TASK [options]")
        args = parse_train_args(task, argv_used)
    info = init_rank(args)
    if not resume:
        if info.is_main:
            run_dir = new_run_dir(task, args.run_dir)
            write_run_files(run_dir, task, argv_used, args)
        run_dir = Path(broadcast_object(str(run_dir)))
    console = Console(quiet=not info.is_main)
    processes = f", {info.world_size} processes ({info.backend})" if info.world_size > 1 else ""
    console.print(f"[bold]canter train[/bold] {task}: {args.env.num_envs} envs{processes}, backend {args.backend}, "
                  f"device {args.device}, seed {args.seed}, run dir [cyan]{run_dir}[/cyan]")
    env = make_rank_env(args, info, console=None if args.quiet else console)
    runner = OnPolicyRunner(env, args.agent, run_dir, seed=args.seed, cpu_physics=args.backend == "cpu")
    if resume:
        runner.load(run_dir / CHECKPOINT)
        console.print(f"resumed at iteration {runner.iteration} ({runner.wall_time_s:.1f} s trained)")
    logger = Logger(run_dir, args.agent.max_iterations, runner.iteration, enabled=info.is_main, console=console)
    try:
        last = runner.learn(logger)
    finally:
        logger.close(runner.history)
    summary = (f"done: {runner.iteration} iterations, {runner.wall_time_s:.1f} s, "
               f"mean return {last.get('mean_return', float('nan')):.3f}, total {last.get('total_fps', 0):,.0f} steps/s")
    console.print(summary)
    console.print(f"results in {run_dir}: checkpoint.pt, training_curve.png, progress.csv, TensorBoard events")
    shutdown()
    return 0


def _positive_int(flag: str, text: str) -> int:
    try:
        value = int(text)
    except ValueError as err:
        raise CanterError(f"{flag}: not an integer: {text!r}") from err
    if value < 1:
        raise CanterError(f"{flag}: must be >= 1, got {value}")
    return value


# --- play / eval ------------------------------------------------------------------------------
def load_run(run_dir: Path, num_envs: int | None, checkpoint: str | None) -> tuple[TrainArgs, OnPolicyRunner]:
    """Rebuild the env and policy of a run directory and load its checkpoint's policy."""
    if not Path(run_dir).is_dir():
        raise CanterError(f"no run directory at {run_dir}")
    if not (Path(run_dir) / COMMAND_FILE).is_file():
        raise CanterError(f"{run_dir} is not a Canter run directory (no {COMMAND_FILE})")
    task, argv = read_command(Path(run_dir))
    args = parse_train_args(task, strip_flags(argv, ("--num-envs", "--run-dir")))
    if num_envs is not None:
        args.env.num_envs = num_envs
    payload = load_checkpoint(Path(checkpoint) if checkpoint else Path(run_dir) / CHECKPOINT)
    env = make_env(args)
    runner = OnPolicyRunner(env, args.agent, Path(run_dir), seed=args.seed, cpu_physics=args.backend == "cpu")
    runner.algorithm.policy.load_state_dict(payload["algorithm"]["policy"])
    runner.algorithm.eval_mode()
    return args, runner


@dataclass(kw_only=True)
class EvalArgs:
    run_dir: tyro.conf.Positional[str]
    episodes: int = 100  # episodes to average over
    num_envs: int = 64
    checkpoint: str | None = None  # default: RUN_DIR/checkpoint.pt
    json: bool = False


def evaluate(runner: OnPolicyRunner, episodes: int, metrics=None) -> dict[str, float]:
    """Run the deterministic policy until `episodes` episodes have ended; their statistics, plus the
    mean over all evaluated steps and envs of each task metric (`metrics(env)` -> per-env tensors)."""
    env, policy = runner.env, runner.algorithm.policy
    obs, _ = env.reset()
    returns: list[torch.Tensor] = []
    lengths: list[torch.Tensor] = []
    metric_sums: dict[str, torch.Tensor] = {}
    count = steps = 0
    with torch.no_grad(), torch_threads(runner.rollout_threads):
        while count < episodes:
            obs, _, terminated, truncated, extras = env.step(policy.act_inference(obs))
            if metrics is not None:
                for name, value in metrics(env).items():
                    metric_sums[name] = metric_sums.get(name, 0.0) + value.double().mean()
                steps += 1
            done = terminated | truncated
            policy.reset(done)
            if bool(done.any()):
                returns.append(extras["episode_return"][done])
                lengths.append(extras["episode_length"][done])
                count += int(done.sum())
    r = torch.cat(returns)[:episodes].double()
    n = torch.cat(lengths)[:episodes].double()
    result = {"episodes": float(r.numel()), "mean_return": float(r.mean()), "std_return": float(r.std(unbiased=False)),
              "min_return": float(r.min()), "max_episode_return": float(r.max()), "mean_episode_length": float(n.mean())}
    result.update({name: float(total) / steps for name, total in metric_sums.items()})
    return result


def eval_main(argv: list[str]) -> int:
    args = tyro.cli(EvalArgs, args=argv, prog="canter eval", description="Evaluate a trained policy.")
    if args.episodes < 1:
        raise CanterError("--episodes must be >= 1")
    _, runner = load_run(Path(args.run_dir), args.num_envs, args.checkpoint)
    task = read_command(Path(args.run_dir))[0]
    spec = REGISTRY.get(task)
    result = evaluate(runner, args.episodes, spec.metrics)
    result["max_return"] = spec.max_return if spec.max_return is not None else float("nan")
    result["task"] = task  # type: ignore[assignment]
    if args.json:
        print(json.dumps({k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in result.items()}, indent=2))
    else:
        Console().print(f"{task}: {int(result['episodes'])} episodes, return {result['mean_return']:.3f} ± {result['std_return']:.3f}"
                        f" (best possible {spec.max_return}), episode length {result['mean_episode_length']:.1f} steps")
        for name in sorted(set(result) - {"episodes", "mean_return", "std_return", "min_return", "max_episode_return",
                                          "mean_episode_length", "max_return", "task"}):
            Console().print(f"  {name}: {result[name]:.4f}")
    return 0


@dataclass(kw_only=True)
class PlayArgs:
    run_dir: tyro.conf.Positional[str]
    num_envs: int = 16
    steps: int | None = None  # env steps to run (default: one episode length)
    video: str | None = None  # write an mp4 of env 0 here (offscreen MuJoCo renderer)
    width: int = 640
    height: int = 480
    camera: str | None = None  # a camera of the model (default: the first one, else free)
    checkpoint: str | None = None


def play_main(argv: list[str]) -> int:
    from canter.cli.video import VideoRecorder

    args = tyro.cli(PlayArgs, args=argv, prog="canter play", description="Run a trained policy.")
    _, runner = load_run(Path(args.run_dir), args.num_envs, args.checkpoint)
    env, policy = runner.env, runner.algorithm.policy
    steps = args.steps or env.max_episode_length
    assert isinstance(env, ManagerBasedRLEnv)
    recorder = VideoRecorder(env, args.video, args.width, args.height, args.camera) if args.video else None
    obs, _ = env.reset()
    total = torch.zeros(env.num_envs)
    finished: list[float] = []
    with torch.no_grad(), torch_threads(runner.rollout_threads):
        for _ in range(steps):
            obs, reward, terminated, truncated, extras = env.step(policy.act_inference(obs))
            done = terminated | truncated
            policy.reset(done)
            total += reward.cpu()
            finished += extras["episode_return"][done].tolist()
            if recorder is not None:
                recorder.capture()
    if recorder is not None:
        path = recorder.close()
        Console().print(f"video: {path} ({recorder.frames} frames at {recorder.fps:.0f} fps)")
    mean = sum(finished) / len(finished) if finished else float("nan")
    Console().print(f"played {steps} steps x {env.num_envs} envs: {len(finished)} episodes ended, mean return {mean:.3f}")
    return 0
