"""`canter train`: a new run or a resumed one, in this process or on N ranks (torchrun's launcher).

Order of a new run: parse and resolve every config, check what only training would find (minibatch
size, env split), build env and runner, and only then create the run directory, lock it and write
`command.json` / `config.yaml` (atomically). A resumed run locks its directory first. A signal
(SIGINT, SIGTERM, SIGHUP) makes the runner save and return; this prints the resume command and
exits 128 + signum.
"""

from __future__ import annotations

import os
import shlex
import sys
from dataclasses import fields
from pathlib import Path
from typing import TYPE_CHECKING

from canter.core.errors import CanterError
from canter.runs.args import DIST_TIMEOUT, TrainArgs, TrainFlags, check_train_args
from canter.runs.lock import HELD_VARIABLE, RunLock
from canter.runs.rundir import (
    CHECKPOINT_FILE,
    Plan,
    RunCommand,
    check_new_run_dir,
    create_run_dir,
    default_run_dir,
    read_command,
    resume_line,
    resumed_command,
    saved_iteration,
    telling_what_is_kept,
    write_run_files,
)

if TYPE_CHECKING:
    from canter.cli.train_cmd import TrainCmd

# set for ranks started by `canter train --nproc N`: the parent prints the resume line
LAUNCHED_VARIABLE = "CANTER_TRAIN_PARENT"


def plan(cmd: TrainCmd, overrides: list[str]) -> Plan:
    """Every check that needs no env: parse, resolve, resume rules, the run directory's state."""
    if cmd.nproc < 1:
        raise CanterError(f"--nproc: must be >= 1, got {cmd.nproc}")
    flags = TrainFlags(**{f.name: getattr(cmd, f.name) for f in fields(TrainFlags)})
    # a rank of a torchrun launch counts the launch's processes (its own --nproc is 1)
    nproc = max(cmd.nproc, int(os.environ.get("WORLD_SIZE", "1")))
    if cmd.resume is not None:
        if cmd.run_dir is not None:
            raise CanterError("--run-dir: not with --resume (the run stays in its directory)")
        run_dir = Path(cmd.resume)
        saved = read_command(run_dir)
        if cmd.task is not None and cmd.task != saved.task:
            raise CanterError(f"{run_dir} is a {saved.task!r} run, not {cmd.task!r}")
        command = resumed_command(saved, flags, overrides, nproc)
        if cmd.dist_timeout != DIST_TIMEOUT:  # how long ranks wait does not change the run
            command.dist_timeout = cmd.dist_timeout
        from canter.runs.network import adopt_saved_network

        args = command.train_args()
        adopt_saved_network(args.agent.policy, run_dir / CHECKPOINT_FILE)  # the network it was trained with
        return Plan(command=command, args=args, run_dir=run_dir, resume=True)
    if cmd.task is None:
        raise CanterError("missing TASK: canter train TASK [options] (or canter train --resume RUN_DIR)")
    overrides = list(overrides)
    if flags.init_from is not None:  # the source's network, unless this command line sets it
        from canter.runs.network import source_network_overrides

        overrides += source_network_overrides(cmd.task, flags.init_from, overrides)
    command = RunCommand(task=cmd.task, flags=flags, overrides=overrides, nproc=nproc,
                         dist_timeout=cmd.dist_timeout)
    run_dir = Path(cmd.run_dir) if cmd.run_dir else default_run_dir(cmd.task)
    if os.environ.get(HELD_VARIABLE) != str(run_dir.resolve()):
        check_new_run_dir(run_dir)
    args = command.train_args()
    check_train_args(args, nproc)
    return Plan(command=command, args=args, run_dir=run_dir, resume=False)


def train(cmd: TrainCmd, overrides: list[str]) -> int:
    from canter.rl.distributed import launched_world_size

    the_plan = plan(cmd, overrides)
    if cmd.nproc > 1:
        if launched_world_size() > 1:
            raise CanterError("--nproc: this process is already one rank of a torchrun launch")
        return launch_training(the_plan, cmd, overrides)
    return run_training(the_plan)


def launch_training(the_plan: Plan, cmd: TrainCmd, overrides: list[str]) -> int:
    """Locks and creates the run directory here, then runs `python -m canter.train ARGV` on nproc
    ranks (canter.runs.launch); a signal that stopped them ends in the resume line."""
    from rich.console import Console

    from canter.runs.launch import LaunchInterrupted, free_port, launch

    run_dir = the_plan.run_dir
    lock = create_run_dir(run_dir, _command_text()) if not the_plan.resume else RunLock(run_dir).acquire(_command_text())
    rank_argv = _rank_argv(cmd, overrides)
    if not the_plan.resume and cmd.run_dir is None:
        rank_argv += ["--run-dir", str(run_dir)]
    port = free_port()
    Console().print(f"[bold]canter train[/bold]: {cmd.nproc} processes on this machine (torchrun, port {port})")
    try:
        launch("canter.train", rank_argv, cmd.nproc, port=port, stoppable=True,
               extra_env={HELD_VARIABLE: str(run_dir.resolve()), LAUNCHED_VARIABLE: "1"})
    except LaunchInterrupted as stop:
        print(resume_line(run_dir, stop.signum, saved_iteration(run_dir), cmd.nproc), file=sys.stderr)
        return 128 + stop.signum
    finally:
        lock.release()
    return 0


def _rank_argv(cmd: TrainCmd, overrides: list[str]) -> list[str]:
    """The train command line of the ranks: cmd's flags that differ from their defaults, then the overrides."""
    argv = [cmd.task] if cmd.task else []
    for f in fields(cmd):
        value = getattr(cmd, f.name)
        if f.name in ("task", "nproc") or value is None or value == f.default:
            continue
        flag = "--" + f.name.replace("_", "-")
        argv += [flag] if value is True else [flag, str(value)]
    return [*argv, *overrides]


def _command_text() -> str:
    return " ".join(["canter", *map(shlex.quote, sys.argv[1:])])[:300]


def run_training(the_plan: Plan) -> int:
    """Trains in this process: alone, or as one rank of a torchrun launch (rank 0 logs and saves)."""
    from rich.console import Console

    from canter.rl.distributed import broadcast_object
    from canter.rl.runner import OnPolicyRunner
    from canter.runs.args import cpu_physics, init_rank, make_rank_env, task_expert

    args, run_dir, resume = the_plan.args, the_plan.run_dir, the_plan.resume
    if args.agent.algo.algo == "ga3c":
        from canter.runs.ga3c import train_ga3c

        return train_ga3c(the_plan, _command_text())
    info = init_rank(args)
    lock: RunLock | None = None
    try:
        if resume and info.is_main:
            lock = RunLock(run_dir).acquire(_command_text())
        checkpoint = run_dir / CHECKPOINT_FILE
        resume_from = resume and broadcast_object(checkpoint.is_file() if info.is_main else None)
        console = Console(quiet=not info.is_main)
        processes = f", {info.world_size} processes ({info.backend})" if info.world_size > 1 else ""
        console.print(f"[bold]canter train[/bold] {the_plan.command.task}: {args.env.num_envs} envs{processes}, "
                      f"backend {args.backend}, device {args.device}, seed {args.seed}, run dir [cyan]{run_dir}[/cyan]", soft_wrap=True)
        env = make_rank_env(args, info, console=None if args.quiet else console)
        runner = OnPolicyRunner(env, args.agent, run_dir, seed=args.seed, cpu_physics=cpu_physics(args),
                                task=the_plan.command.task, expert=task_expert(the_plan.command.task, args, env))
        if resume_from:
            runner.load(checkpoint)
            console.print(f"resumed at iteration {runner.iteration} ({runner.wall_time_s:.1f} s trained)")
        elif resume:
            console.print(f"{run_dir} has no {CHECKPOINT_FILE}: training it from iteration 0")
        if args.init_from is not None and not resume_from:
            from canter.runs.init_from import init_policy

            console.print(init_policy(runner, args.init_from, optimizer=not args.init_fresh_optimizer))
        if info.is_main:
            if not resume:
                lock = create_run_dir(run_dir, _command_text(), lambda: write_run_files(run_dir, the_plan.command, args))
            else:
                write_run_files(run_dir, the_plan.command, args)  # a resumed run keeps its new budget
        broadcast_object(None)  # every rank waits until the run directory exists
        return _learn(runner, args, run_dir, info.is_main, console)
    finally:
        if lock is not None:
            lock.release()


def _learn(runner, args: TrainArgs, run_dir: Path, is_main: bool, console) -> int:
    """runner.learn with the logger; the summary, or the resume line after a signal (128 + signum)."""
    from canter.rl.distributed import shutdown
    from canter.rl.logger import RECENT_EPISODES, Logger, mean_return_text

    nproc = int(os.environ.get("WORLD_SIZE", "1"))
    logger = Logger(run_dir, args.agent.max_iterations, runner.iteration, enabled=is_main, console=console)
    with telling_what_is_kept(run_dir, nproc), logger.closed_after(lambda: runner.history):
        last = runner.learn(logger)
    stop = runner.stop_signal
    if stop is not None:
        if is_main and not os.environ.get(LAUNCHED_VARIABLE):
            print(resume_line(run_dir, int(stop), runner.iteration, nproc), file=sys.stderr)
        shutdown()
        return 128 + int(stop)
    blow_ups = int(last.get("nonfinite_resets_total", 0))
    returns = mean_return_text(last.get("recent_return", float("nan")), f"last {RECENT_EPISODES}+ episodes")
    console.print(f"done: {runner.iteration} iterations, {runner.wall_time_s:.1f} s, {returns}, total {last.get('total_fps', 0):,.0f} steps/s"
                  + (f", {blow_ups} non-finite (unstable) env resets" if blow_ups else ""))
    console.print(f"results in {run_dir}: checkpoint.pt, training_curve.png, progress.csv, TensorBoard events", soft_wrap=True)
    shutdown()
    return 0

