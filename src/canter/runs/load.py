"""Rebuilding a trained run from its directory: env, runner and the checkpoint's policy."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from canter.runs.args import TrainArgs, make_env
from canter.runs.rundir import CHECKPOINT_FILE, RunCommand, check_checkpoint_fits, read_command

if TYPE_CHECKING:
    from canter.rl.runner import OnPolicyRunner


def load_run(run_dir: str | Path, num_envs: int | None = None,
             checkpoint: str | None = None) -> tuple[RunCommand, TrainArgs, OnPolicyRunner]:
    """The run's command, its TrainArgs (num_envs replaced if given) and a runner whose policy holds
    the checkpoint's weights, in eval mode. CanterError for a missing run or checkpoint, or a
    checkpoint of another task or network."""
    from canter.rl.checkpoint import load_checkpoint
    from canter.rl.runner import OnPolicyRunner

    command = read_command(run_dir)
    args = command.train_args()
    if num_envs is not None:
        args.env.num_envs = num_envs
    path = Path(checkpoint) if checkpoint else Path(run_dir) / CHECKPOINT_FILE
    payload = load_checkpoint(path)
    env = make_env(args)
    runner = OnPolicyRunner(env, args.agent, Path(run_dir), seed=args.seed, cpu_physics=args.backend == "cpu")
    policy = runner.algorithm.policy
    check_checkpoint_fits(payload, path, command.task, policy.state_dict())
    policy.load_state_dict(payload["algorithm"]["policy"])
    runner.algorithm.eval_mode()
    return command, args, runner
