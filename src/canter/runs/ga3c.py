"""`canter train TASK --algo ga3c`: GA3C (canter.rl.ga3c) as a training run like PPO's.

The run directory is the same as a PPO run's (command.json, config.yaml, checkpoint.pt,
progress.csv, training_curve.png, TensorBoard events), so `canter eval`, `play` and `export` read it;
one row of the curves per balancing period (`agent.algo.ga3c.adjust-every-s`), the frame rates
being PPS. An "iteration" of a GA3C run is what PPO's is in env steps, one rollout of all envs
(num_envs x num_steps_per_env agent steps), so `--max-iterations` gives both algorithms the same
budget of experience; GA3C's updates (policy versions) are counted apart. The checkpoint is written
every period and when the run stops; a signal (SIGINT, SIGTERM, SIGHUP) stops it within a fraction
of a second with the checkpoint saved. `--max-time` is the wall time of this session. A resumed run
restores the model, Adam's moments, the policy version, the trained time and env steps, the
balancer's thread counts and the curves; its envs start new episodes.
"""

from __future__ import annotations

import math
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from canter.core.errors import ConfigError
from canter.core.signals import catch_stop_signals

if TYPE_CHECKING:
    from canter.rl.ga3c import Ga3cRunner, PeriodStats
    from canter.runs.args import TrainArgs
    from canter.runs.rundir import Plan

CHECKPOINT_KIND = "ga3c"


def check_ga3c_args(args: TrainArgs, world_size: int) -> None:
    """What GA3C cannot run, as one-line ConfigErrors (before anything is written)."""
    from canter.core.device import resolve_device

    ga3c = args.agent.algo.ga3c
    if world_size > 1:
        raise ConfigError("--algo ga3c: one process (its agents, predictors and trainers are threads); drop --nproc")
    if resolve_device(args.device).type != "cpu":
        raise ConfigError(f"--algo ga3c: runs on the CPU (its agents are CPU threads), not on --device {args.device}")
    if args.backend != "cpu":
        raise ConfigError(f"--algo ga3c: steps the cpu backend, not --backend {args.backend}")
    if args.env.num_envs % ga3c.num_agents:
        raise ConfigError(f"agent.algo.ga3c.num_agents: {args.env.num_envs} envs cannot be split evenly over "
                          f"{ga3c.num_agents} agents")
    if args.agent.policy.rnn_type != "none":
        raise ConfigError("--algo ga3c: feed-forward policies only (agent.policy.rnn_type is "
                          f"{args.agent.policy.rnn_type!r})")
    if args.agent.algo.symmetry != "off":
        raise ConfigError("agent.algo.symmetry: PPO only, not algo ga3c")
    if args.agent.algo.schedule == "linear":
        raise ConfigError("agent.algo.schedule: algo ga3c keeps learning_rate fixed, not 'linear'")


def split_threads(args: TrainArgs, agents: int) -> None:
    """Each agent's env gets cores / agents threads (MuJoCo's pool or the emulators')."""
    from canter.core.device import available_cores

    threads = max(1, available_cores() // agents)
    sim = getattr(args.env, "sim", None)
    if sim is not None:
        sim.num_threads = threads
    else:
        args.env.num_threads = threads  # type: ignore[union-attr]


def build_ga3c(args: TrainArgs, on_period: Any = None) -> Ga3cRunner:
    """args.agent.algo.ga3c.num_agents envs (the run's envs split evenly, seeded per agent as ranks
    are) and a GA3C runner whose policy starts from the parameters PPO would start from."""
    from canter.core.rng import derive_seed, make_generator
    from canter.rl.cuda_graph import check_cuda_graph
    from canter.rl.factory import check_action_space, make_policy
    from canter.rl.ga3c import Ga3cRunner
    from canter.runs.args import make_env

    check_cuda_graph(args.agent.algo)
    agents = args.agent.algo.ga3c.num_agents
    split_threads(args, agents)
    envs = [make_env(args, rank=i, num_envs=args.env.num_envs // agents) for i in range(agents)]
    check_action_space(envs[0], args.agent.policy, args.agent.algo)
    policy = make_policy(envs[0].observation_shapes, envs[0].num_actions, args.agent.policy,
                         init_generator=make_generator(derive_seed(args.seed, 0), "cpu"))
    return Ga3cRunner(envs, policy, args.agent.algo, args.agent.algo.ga3c, seed=args.seed, on_period=on_period)


def curve_row(stats: PeriodStats, rollout: int) -> dict[str, float]:
    """A period as a row of progress.csv (canter.rl.logger.CURVE_KEYS): iteration = env steps /
    `rollout` (the agent steps of one rollout of all envs), FPS = PPS."""
    return {"iteration": float(stats.env_steps // rollout), "wall_time_s": stats.wall_time_s, "env_steps": float(stats.env_steps),
            "mean_return": stats.mean_return, "mean_episode_length": stats.mean_episode_length,
            "step_fps": stats.pps, "step_inference_fps": stats.pps, "total_fps": stats.pps, "nonfinite_resets": 0.0}


def scalars(stats: PeriodStats) -> dict[str, float]:
    """TensorBoard scalars of a period."""
    out = {"GA3C/updates": float(stats.updates), "Train/mean_reward": stats.mean_return, "Train/mean_episode_length": stats.mean_episode_length,
           "GA3C/pps": stats.pps, "GA3C/tps": stats.tps, "GA3C/transitions_per_s": stats.transitions_per_s,
           "GA3C/policy_lag": stats.policy_lag, "GA3C/prediction_queue": float(stats.prediction_queue),
           "GA3C/training_queue": float(stats.training_queue), "GA3C/predictors": float(stats.predictors),
           "GA3C/trainers": float(stats.trainers)}
    out.update({f"Loss/{name}": value for name, value in stats.losses.items()})
    out.update({f"GA3C_threads/{name}": value for name, value in stats.activity.items()})
    return out


def rollout_steps(args: TrainArgs) -> int:
    """Agent steps in one iteration: a rollout of all envs."""
    return args.env.num_envs * args.agent.algo.num_steps_per_env


def save(runner: Ga3cRunner, path: Path, meta: dict[str, Any], rollout: int) -> None:
    """The checkpoint: the policy where `canter eval`/`play`/`export` look for it, GA3C's state beside it."""
    from canter.rl.checkpoint import save_atomic

    state = runner.state_dict()
    rows = [curve_row(_stats(p), rollout) for p in state["history"]]
    save_atomic({"meta": meta, "kind": CHECKPOINT_KIND, "iteration": state["env_steps"] // rollout,
                 "wall_time_s": state["wall_time_s"], "algorithm": {"policy": state["policy"], "ga3c": state},
                 "history": rows, "world_size": 1}, path)


def _stats(row: dict[str, Any]) -> PeriodStats:
    from canter.rl.ga3c import PeriodStats

    return PeriodStats(**row)


def load(runner: Ga3cRunner, path: Path, meta: dict[str, Any]) -> None:
    """Restores a GA3C checkpoint (CanterError for another task's, or a PPO run's)."""
    from canter.core.errors import CanterError
    from canter.rl.checkpoint import check_compatible, load_checkpoint

    payload = load_checkpoint(path)
    if payload.get("kind") != CHECKPOINT_KIND:
        raise CanterError(f"{path} was not written by algo ga3c; resume it with its own algorithm")
    check_compatible(payload, path, meta, runner.policy.state_dict())
    runner.load_state_dict(payload["algorithm"]["ga3c"])


@contextmanager
def stop_on_signals(runner: Ga3cRunner) -> Iterator[list[signal.Signals]]:
    """Within: a stop signal sets runner.interrupt (learn returns, the checkpoint is saved); a
    second SIGINT raises KeyboardInterrupt. Yields the list the received signal is appended to."""
    with catch_stop_signals(lambda _: runner.interrupt.set()) as received:
        yield received


def train_ga3c(the_plan: Plan, lock_text: str) -> int:
    """Trains the plan's run with GA3C in this process; 0, or 128 + signum after a stop signal."""
    from rich.console import Console

    from canter.rl.logger import Logger, mean_return_text
    from canter.runs.lock import RunLock
    from canter.runs.rundir import CHECKPOINT_FILE, create_run_dir, telling_what_is_kept, write_run_files

    args, run_dir, resume = the_plan.args, the_plan.run_dir, the_plan.resume
    ga3c = args.agent.algo.ga3c
    console = Console()
    lock: RunLock | None = None
    try:
        if resume:
            lock = RunLock(run_dir).acquire(lock_text)
        checkpoint = run_dir / CHECKPOINT_FILE
        console.print(f"[bold]canter train[/bold] {the_plan.command.task}: {args.env.num_envs} envs, algo ga3c "
                      f"({ga3c.num_agents} agents), seed {args.seed}, run dir [cyan]{run_dir}[/cyan]", soft_wrap=True)
        logger: Logger | None = None
        runner = build_ga3c(args)
        envs = runner.envs
        meta = {"task": the_plan.command.task, "observation_shapes": dict(envs[0].observation_shapes),
                "num_actions": envs[0].num_actions}
        rollout = rollout_steps(args)
        if resume and checkpoint.is_file():
            load(runner, checkpoint, meta)
            console.print(f"resumed at iteration {runner.env_steps // rollout}, update {runner.version} "
                          f"({runner.wall_time_s:.1f} s trained)")
        elif resume:
            console.print(f"{run_dir} has no {CHECKPOINT_FILE}: training it from iteration 0")
        if not resume:
            lock = create_run_dir(run_dir, lock_text, lambda: write_run_files(run_dir, the_plan.command, args))
        else:
            write_run_files(run_dir, the_plan.command, args)
        budget = args.agent.max_iterations * rollout
        logger = Logger(run_dir, args.agent.max_iterations, runner.env_steps // rollout, console=console)

        def rows() -> list[dict[str, float]]:  # the periods as progress.csv's rows
            return [curve_row(p, rollout) for p in runner.history]

        def on_period(stats: PeriodStats) -> None:
            assert logger is not None
            row = curve_row(stats, rollout)
            logger.log_iteration(max(0, min(int(row["iteration"]), args.agent.max_iterations) - 1), scalars(stats), row)
            save(runner, checkpoint, meta, rollout)
            logger.checkpoint(rows())
            if logger.output_closed:  # the output's reader went away: stop as for a signal (SIGPIPE)
                runner.interrupt.set()

        runner.on_period = on_period
        seconds = args.agent.max_time_s if args.agent.max_time_s is not None else math.inf
        with telling_what_is_kept(run_dir), logger.closed_after(rows), stop_on_signals(runner) as received:
            if runner.env_steps < budget:
                runner.learn(seconds, max_env_steps=budget)
            save(runner, checkpoint, meta, rollout)
            if logger.output_closed and not received:
                received.append(signal.SIGPIPE)
        for env in envs:
            env.close()
        if received:
            from canter.runs.rundir import resume_line

            print(resume_line(run_dir, int(received[0]), runner.env_steps // rollout), file=sys.stderr)
            return 128 + int(received[0])
        last = runner.history[-1] if runner.history else None
        console.print(f"done: {runner.env_steps // rollout} iterations ({runner.env_steps:,} agent steps, "
                      f"{runner.version} updates), {runner.wall_time_s:.1f} s"
                      + (f", {mean_return_text(last.mean_return)}, PPS {last.pps:,.0f}, TPS {last.tps:.2f}" if last else ""))
        console.print(f"results in {run_dir}: checkpoint.pt, training_curve.png, progress.csv, TensorBoard events",
                      soft_wrap=True)
        return 0
    finally:
        if lock is not None:
            lock.release()
