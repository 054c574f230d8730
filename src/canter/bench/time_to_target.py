"""`canter bench time-to-target`: the wall time a task's training needs to reach a target.

Trains the task (any train flags and --env.* / --agent.* overrides) and, at fixed marks of training
wall time, evaluates the deterministic policy in a separate evaluation: a fresh env built with a fixed
seed (the same commands, initial states and randomization at every mark and in every run of the
bench) running `episodes` episodes (canter.cli.play_eval.evaluate: every env contributes its first
episodes, so short episodes are not favoured). Evaluation time is not training time: the training
clock stops while it runs. The result is the first mark at which the metric reached the target (None
if none did), the metric at every mark, and a PNG of metric against training wall time.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Literal

from canter.bench.report import machine_info
from canter.core.errors import CanterError
from canter.core.files import save_figure

EVAL_SEED = 20261124  # the evaluation env's seed: the same episodes at every mark and in every run

Direction = Literal["auto", "above", "below"]


@dataclass(kw_only=True)
class TimeToTargetResult:
    task: str
    metric: str  # one metric, or several joined by commas: reached when every one reaches the target
    target: float
    direction: str  # "above": reached when metric >= target; "below": when metric <= target
    minutes: float
    eval_every_s: float
    episodes: int
    eval_envs: int
    num_envs: int
    time_to_target_s: float | None  # training wall time of the first mark that reached the target
    env_steps_to_target: float | None
    marks: list[dict[str, float]] = field(default_factory=list)  # per mark: train_wall_s, env_steps, metrics
    stopped_by: str | None = None  # a stop signal (e.g. "SIGINT") that ended the run before its budget
    machine: dict[str, object] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        machine = out.pop("machine")
        return {**out, **machine}


def _direction(metric: str, direction: Direction) -> str:
    if direction != "auto":
        return direction
    # errors and failure endings should fall; returns, lengths, success and time-out shares should rise
    failure = metric.startswith("ended_by_") and not any(word in metric for word in ("time_out", "success"))
    return "below" if "error" in metric or failure else "above"


def _reached(value: float, target: float, direction: str) -> bool:
    return math.isfinite(value) and (value <= target if direction == "below" else value >= target)


def _curriculum(env: Any) -> dict[str, float]:
    """The training env's curriculum values at a mark (e.g. the hand's goal range, the mean terrain
    level), as train_curriculum_<name>: where a curriculum stood explains a mark's score."""
    manager = getattr(env, "curriculum_manager", None)
    if manager is None:
        return {}
    return {f"train_curriculum_{name}": float(value.float().mean()) for name, value in manager.state.items()}


def run_time_to_target(task: str, metric: str, target: float, minutes: float, train_argv: list[str], *,
                       eval_every_s: float | None = None, episodes: int = 256, eval_envs: int = 256,
                       direction: Direction = "auto", stop_at_target: bool = False,
                       save_dir: str | None = None, progress: Any = None) -> TimeToTargetResult:
    """save_dir: keep the trained run there as a run directory (command.json, config.yaml) with
    `checkpoint.pt` (the last mark) and `checkpoint_<minutes>min.pt` at every mark, for `canter
    play`/`eval`; None: train in a temporary directory."""
    from canter.cli.play_eval import evaluate
    from canter.core.device import torch_threads
    from canter.envs.atari import AtariEnv
    from canter.envs.manager_env import ManagerBasedRLEnv
    from canter.rl.runner import OnPolicyRunner
    from canter.runs.args import TrainFlags, build_env, cpu_physics, make_env, parse_train_args, task_expert
    from canter.runs.parsing import parse
    from canter.runs.rundir import RunCommand, make_run_dir, write_run_files
    from canter.tasks import REGISTRY

    if not minutes > 0:
        raise CanterError(f"--minutes: must be > 0, got {minutes}")
    if episodes < 1 or eval_envs < 1:
        raise CanterError("--episodes and --eval-envs must be >= 1")
    if not math.isfinite(target):
        raise CanterError(f"--target: must be a finite number, got {target}")
    budget = minutes * 60.0
    every = eval_every_s if eval_every_s is not None else budget / 10.0
    if not every > 0:
        raise CanterError(f"--eval-every: must be > 0 seconds, got {every}")
    spec = REGISTRY.get(task)
    args = parse_train_args(task, [*train_argv, "--quiet"])

    def eval_env() -> ManagerBasedRLEnv | AtariEnv:
        cfg = dataclasses.replace(args.env)
        cfg.seed = EVAL_SEED
        cfg.num_envs = eval_envs
        scoring = getattr(cfg, "evaluation", None)  # training-only aids off (Atari: unclipped scores)
        return build_env(scoring() if scoring is not None else cfg)

    # the metric must be one the evaluation reports: check before any training
    probe = eval_env()
    known = ["mean_return", "mean_episode_length", "std_return", "min_return", "max_episode_return",
             *(spec.metrics(probe) if spec.metrics is not None else {}),
             *(f"ended_by_{name}" for name in getattr(getattr(probe, "termination_manager", None), "names", ())),
             *(f"{name}_{stat}" for name in (spec.episode_metrics(probe) if spec.episode_metrics is not None else {})
               for stat in ("mean", "median", "max"))]
    names = [name.strip() for name in metric.split(",") if name.strip()]
    for name in names or [metric]:
        if name not in known:
            raise CanterError(f"--metric: {task} has no metric {name!r} (have: {', '.join(known)})")
    del probe
    ways = {_direction(name, direction) for name in names}
    if len(ways) > 1:
        raise CanterError(f"--metric: {metric!r} mixes metrics that should rise and fall; give one direction's")
    way = ways.pop()

    def reached(mark: dict[str, float]) -> bool:
        return all(_reached(mark[name], target, way) for name in names)

    # the training budget is the run's: a linear learning-rate schedule anneals over --minutes
    args.agent.max_time_s = budget if args.agent.max_time_s is None else min(budget, args.agent.max_time_s)
    kept = None if save_dir is None else make_run_dir(Path(save_dir))
    env = make_env(args)
    marks: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = kept if kept is not None else Path(tmp)
        if kept is not None:
            flags, overrides = parse(TrainFlags, [*train_argv, "--quiet"], prog=f"canter train {task}", unknown=True)
            write_run_files(kept, RunCommand(task=task, flags=flags, overrides=overrides), args)
        runner = OnPolicyRunner(env, args.agent, run_dir, seed=args.seed, cpu_physics=cpu_physics(args),
                                task=task, expert=task_expert(task, args, env))
        obs = env.reset()[0]
        runner.algorithm.train_mode()
        trained = 0.0
        env_steps = 0.0
        next_mark = every
        stopped_by = None
        # a stop signal (Ctrl-C, SIGTERM, SIGHUP) ends the run at the end of the iteration or evaluation
        # under way, with the run saved and the marks so far reported; a second SIGINT stops at once
        with runner.stop_signals():
            while runner.received_signal is None:
                start = time.perf_counter()
                obs, stats = runner.run_iteration(obs, None)
                runner.iteration += 1
                trained += time.perf_counter() - start
                runner.wall_time_s = trained
                env_steps += env.num_envs * args.agent.algo.num_steps_per_env
                if trained < next_mark and trained < budget:
                    continue
                next_mark = (math.floor(trained / every) + 1) * every
                policy = copy.deepcopy(runner.algorithm.policy)
                policy.eval()
                evaluation_env = eval_env()
                view = SimpleNamespace(env=evaluation_env, algorithm=SimpleNamespace(policy=policy),
                                       rollout_threads=runner.rollout_threads)
                with torch_threads(runner.rollout_threads):
                    result = evaluate(view, episodes, spec.metrics, spec.episode_metrics)  # type: ignore[arg-type]
                mark = {"train_wall_s": trained, "env_steps": env_steps, "iteration": float(runner.iteration),
                        "train_mean_return": stats["recent_return"], **_curriculum(env), **result}
                marks.append(mark)
                if kept is not None:
                    runner.save(kept / f"checkpoint_{trained / 60.0:.0f}min.pt")
                    runner.save()
                if progress is not None:
                    progress(mark, metric)
                if trained >= budget or (stop_at_target and reached(mark)):
                    break
            if runner.received_signal is not None:
                stopped_by = runner.received_signal.name
                if kept is not None:  # the training since the last mark is kept too
                    runner.save()
    first = next((m for m in marks if reached(m)), None)
    return TimeToTargetResult(
        task=task, metric=metric, target=target, direction=way, minutes=minutes, eval_every_s=every,
        episodes=episodes, eval_envs=eval_envs, num_envs=env.num_envs,
        time_to_target_s=None if first is None else first["train_wall_s"],
        env_steps_to_target=None if first is None else first["env_steps"], marks=marks, stopped_by=stopped_by,
        machine=machine_info())


def plot_time_to_target(result: TimeToTargetResult, path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.2))
    times = [m["train_wall_s"] / 60.0 for m in result.marks]
    for name in result.metric.split(","):
        ax.plot(times, [m[name] for m in result.marks], "o-", label=name)
    ax.axhline(result.target, color="gray", linestyle="--", linewidth=1, label=f"target {result.target:g}")
    if result.time_to_target_s is not None:
        ax.axvline(result.time_to_target_s / 60.0, color="tab:green", linestyle=":", linewidth=1.5,
                   label=f"reached at {result.time_to_target_s / 60.0:.1f} min")
    ax.set_xlabel("training wall time (min; evaluation excluded)")
    ax.set_ylabel(result.metric if "," not in result.metric else "metrics")
    ax.set_title(f"{result.task}: {result.metric} ({result.num_envs} envs, {result.machine.get('cpu')}, "
                 f"{result.machine.get('cores')} cores)", fontsize=9)
    ax.grid(True, alpha=0.3)
    ax.legend()
    save_figure(fig, path, dpi=110)
    return path
