"""Rebuilding a trained run from its directory: env, runner and the checkpoint's policy."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from canter.core.errors import CanterError
from canter.runs.args import (
    TrainArgs,
    apply_command,
    apply_photos,
    build_train_args,
    cpu_physics,
    make_env,
    task_expert,
)
from canter.runs.rundir import CHECKPOINT_FILE, RunCommand, read_command

if TYPE_CHECKING:
    from canter.rl.runner import OnPolicyRunner


def load_run(run_dir: str | Path, num_envs: int | None = None, checkpoint: str | None = None,
             photos: str | None = None, velocity: tuple[float, float, float] | None = None,
             task: str | None = None) -> tuple[RunCommand, TrainArgs, OnPolicyRunner]:
    """The run's command, its TrainArgs (num_envs replaced if given; photo backgrounds from `photos`
    if given, shown as they are, see apply_photos; every velocity command held at `velocity` if given, see
    apply_command) and a runner whose policy holds the checkpoint's weights, in eval
    mode. CanterError for a missing run or checkpoint, or a checkpoint of another task or network.

    task: a registered task whose env the policy acts in (e.g. a hand-cube policy on hand-cube-dr's
    randomized physics, or the run's own task to undo its --env.* overrides): that task's env config
    as registered, with the run's flags (num_envs, backend, device, model) but not its --env.*
    overrides, and the run's agent; the returned TrainArgs say so (args.task). CanterError unless
    its observation groups and actions are the ones the run's policy reads."""
    from canter.rl.checkpoint import load_checkpoint
    from canter.rl.runner import OnPolicyRunner
    from canter.runs.network import adopt_network

    command = read_command(run_dir)
    try:
        # with --task the run's --env.* overrides are not read: they need only fit the run's own task, which may
        # have changed since (e.g. an override of a term the task no longer has)
        args = command.train_args(env_overrides=task is None)
    except CanterError as err:
        if task is not None:  # only its --agent.* overrides were read
            raise CanterError(f"{run_dir}: the run's --agent.* overrides no longer fit task {command.task!r} as registered "
                              f"({err})") from None
        raise CanterError(f"{run_dir}: the run's overrides no longer fit task {command.task!r} as registered ({err}); "
                          f"--task TASK evaluates it in a registered task's env without its --env.* overrides") from None
    path = Path(checkpoint) if checkpoint else Path(run_dir) / CHECKPOINT_FILE
    payload = load_checkpoint(path)  # before the env: a missing or corrupt checkpoint fails first
    adopt_network(args.agent.policy, payload["algorithm"]["policy"])  # the network it was trained with
    if task is not None:
        args.env = build_train_args(task, command.flags, [], dist_timeout=command.dist_timeout).env
        args.task = task
    if num_envs is not None:
        args.env.num_envs = num_envs
    if photos is not None:
        apply_photos(args.env, photos, as_they_are=True)
    if velocity is not None:
        note = apply_command(args.env, velocity)
        if note:
            print(f"note: {note}", file=sys.stderr)
    env = make_env(args)
    if task is not None:
        _check_env_fits(env, args, command.task, payload.get("meta") or {})
    runner = OnPolicyRunner(env, args.agent, Path(run_dir), seed=args.seed, cpu_physics=cpu_physics(args),
                            task=command.task, expert=task_expert(args.task, args, env))
    runner.load_policy(path, payload)
    runner.algorithm.eval_mode()
    return command, args, runner


def _missing_group(groups: Any, shapes: dict[str, Any]) -> str | None:
    """The first of `groups` that has no entry in an env's observation `shapes`, or None."""
    return next((group for group in groups if group not in shapes), None)


def _check_env_fits(env: Any, args: TrainArgs, run_task: str, saved: dict[str, Any]) -> None:
    """CanterError (one line) unless `env` (of args.task) has every observation group the policy
    of a checkpoint with meta `saved` reads, with the same shape, and as many actions."""
    from canter.rl.modules import resolve_obs_groups

    shapes = {group: tuple(shape) for group, shape in env.observation_shapes.items()}
    wanted = {group: tuple(shape) for group, shape in (saved.get("observation_shapes") or {}).items()}
    policy = args.agent.policy
    # the groups the run's policy read, by the rule that built it (a critic whose groups its env lacked read the
    # actor's: a symmetric actor-critic, e.g. cartpole); every configured group for a checkpoint without shapes
    read = sum(resolve_obs_groups(wanted, policy), ()) if wanted else (*policy.actor_obs_groups, *policy.critic_obs_groups)
    groups = dict.fromkeys(read)
    missing = _missing_group(groups, shapes)
    if missing is not None:
        raise CanterError(f"--task {args.task}: its env has no observation group {missing!r}, which the "
                          f"{run_task!r} policy reads (groups: {', '.join(shapes)})")
    for group in groups:
        if group in wanted and shapes[group] != wanted[group]:
            raise CanterError(f"--task {args.task}: its observation group {group!r} is {'x'.join(map(str, shapes[group]))}, "
                              f"the {run_task!r} policy reads {'x'.join(map(str, wanted[group]))}")
    if saved.get("num_actions") is not None and int(saved["num_actions"]) != env.num_actions:
        raise CanterError(f"--task {args.task}: its env takes {env.num_actions} actions, the {run_task!r} policy "
                          f"gives {saved['num_actions']}")


def teacher_expert(run_dir: str | Path, task: str, env: Any) -> Any:
    """The deterministic policy of a trained run of `task` as a DAgger expert on `env` (its actor
    reads its own groups, e.g. privileged ones, from this env). CanterError for a run of another
    task, a group this env lacks, or a checkpoint that does not fit."""
    from canter.core.rng import make_generator
    from canter.rl.checkpoint import check_compatible, load_checkpoint
    from canter.rl.dagger import policy_expert
    from canter.rl.factory import make_policy
    from canter.runs.network import adopt_network
    from canter.tasks import REGISTRY

    command = read_command(run_dir)
    teacher_task = REGISTRY.get(task).teacher_task
    if command.task not in (task, teacher_task):
        wanted = f"{task!r}" + (f" or {teacher_task!r}" if teacher_task else "")
        raise CanterError(f"--teacher {run_dir} is a {command.task!r} run; this run is {task!r} (its teacher: a {wanted} run)")
    policy_cfg = command.train_args().agent.policy
    path = Path(run_dir) / CHECKPOINT_FILE
    payload = load_checkpoint(path, map_location=env.device)
    adopt_network(policy_cfg, payload["algorithm"]["policy"])  # the network it was trained with
    shapes = env.observation_shapes
    groups = dict.fromkeys((*policy_cfg.actor_obs_groups, *policy_cfg.critic_obs_groups))
    missing = _missing_group(policy_cfg.actor_obs_groups, shapes)
    if missing is not None:
        raise CanterError(f"--teacher {run_dir}: its policy reads observation group {missing!r}, which this env "
                          f"lacks (groups: {', '.join(shapes)})")
    teacher = make_policy({g: shapes[g] for g in groups if g in shapes}, env.num_actions, policy_cfg,
                          init_generator=make_generator(0, "cpu"))
    check_compatible(payload, path, payload.get("meta") or {}, teacher.state_dict())
    teacher.load_state_dict(payload["algorithm"]["policy"])
    return policy_expert(teacher.to(env.device))
