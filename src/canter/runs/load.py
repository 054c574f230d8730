"""Rebuilding a trained run from its directory: env, runner and the checkpoint's policy."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from canter.core.errors import CanterError
from canter.runs.args import TrainArgs, apply_command, apply_photos, cpu_physics, make_env, task_expert
from canter.runs.rundir import CHECKPOINT_FILE, RunCommand, read_command

if TYPE_CHECKING:
    from canter.rl.runner import OnPolicyRunner


def load_run(run_dir: str | Path, num_envs: int | None = None, checkpoint: str | None = None,
             photos: str | None = None, velocity: tuple[float, float, float] | None = None,
             ) -> tuple[RunCommand, TrainArgs, OnPolicyRunner]:
    """The run's command, its TrainArgs (num_envs replaced if given; photo backgrounds from `photos`
    if given, shown as they are, see apply_photos; every velocity command held at `velocity` if given, see
    apply_command) and a runner whose policy holds the checkpoint's weights, in eval
    mode. CanterError for a missing run or checkpoint, or a checkpoint of another task or network."""
    from canter.rl.runner import OnPolicyRunner

    command = read_command(run_dir)
    args = command.train_args()
    if num_envs is not None:
        args.env.num_envs = num_envs
    if photos is not None:
        apply_photos(args.env, photos, as_they_are=True)
    if velocity is not None:
        apply_command(args.env, velocity)
    path = Path(checkpoint) if checkpoint else Path(run_dir) / CHECKPOINT_FILE
    env = make_env(args)
    runner = OnPolicyRunner(env, args.agent, Path(run_dir), seed=args.seed, cpu_physics=cpu_physics(args),
                            task=command.task, expert=task_expert(command.task, args, env))
    runner.load_policy(path)
    runner.algorithm.eval_mode()
    return command, args, runner


def teacher_expert(run_dir: str | Path, task: str, env: Any) -> Any:
    """The deterministic policy of a trained run of `task` as a DAgger expert on `env` (its actor
    reads its own groups, e.g. privileged ones, from this env). CanterError for a run of another
    task, a group this env lacks, or a checkpoint that does not fit."""
    from canter.core.rng import make_generator
    from canter.rl.checkpoint import check_compatible, load_checkpoint
    from canter.rl.dagger import policy_expert
    from canter.rl.factory import make_policy
    from canter.tasks import REGISTRY

    command = read_command(run_dir)
    teacher_task = REGISTRY.get(task).teacher_task
    if command.task not in (task, teacher_task):
        wanted = f"{task!r}" + (f" or {teacher_task!r}" if teacher_task else "")
        raise CanterError(f"--teacher {run_dir} is a {command.task!r} run; this run is {task!r} (its teacher: a {wanted} run)")
    policy_cfg = command.train_args().agent.policy
    shapes = env.observation_shapes
    groups = dict.fromkeys((*policy_cfg.actor_obs_groups, *policy_cfg.critic_obs_groups))
    missing = [g for g in policy_cfg.actor_obs_groups if g not in shapes]
    if missing:
        raise CanterError(f"--teacher {run_dir}: its policy reads observation group {missing[0]!r}, which this env "
                          f"lacks (groups: {', '.join(shapes)})")
    teacher = make_policy({g: shapes[g] for g in groups if g in shapes}, env.num_actions, policy_cfg,
                          init_generator=make_generator(0, "cpu"))
    path = Path(run_dir) / CHECKPOINT_FILE
    payload = load_checkpoint(path, map_location=env.device)
    check_compatible(payload, path, payload.get("meta") or {}, teacher.state_dict())
    teacher.load_state_dict(payload["algorithm"]["policy"])
    return policy_expert(teacher.to(env.device))
