"""`canter train`, `canter play` and `canter eval`: their flags (the work is in train_run / play_eval)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar

import tyro

from canter.cli.flags import OptionalTask
from canter.runs.args import DIST_TIMEOUT, TrainFlags


@dataclass(kw_only=True)
class TrainCmd(TrainFlags):
    """Train a policy (PPO by default) on TASK; `--env.FIELD VALUE` / `--agent.FIELD VALUE` override any
    config field (`canter train TASK --help` lists them). `--resume RUN_DIR` continues a run: only the
    budget (--max-iterations, --max-time, --agent.save-interval) and --quiet may change."""

    PASS_THROUGH: ClassVar[str] = "overrides"
    task: OptionalTask = None  # a registered task (canter list); omitted with --resume
    run_dir: str | None = None  # default: runs/<task>-<date>-<time>
    resume: str | None = None  # continue the run in this directory
    nproc: int = 1  # processes on this machine (torch.distributed through torchrun); --num-envs is the total
    dist_timeout: float = DIST_TIMEOUT  # seconds a rank waits in a collective for another rank before failing

    def run(self, overrides: list[str]) -> int:
        from canter.cli.train_run import train

        return train(self, overrides)


def print_task_help(task: str) -> None:
    """`canter train TASK --help`: the train flags and every field of the task's configs."""
    from canter.runs.args import _import_config_types, task_configs

    _import_config_types()
    from canter.envs.env_cfg import EnvCfg
    from canter.rl.runner import RunnerCfg

    help_type = dataclasses.make_dataclass("TrainHelp", [("env", EnvCfg), ("agent", RunnerCfg)], bases=(TrainCmd,),
                                           kw_only=True)
    help_type.__doc__ = TrainCmd.__doc__
    env, agent = task_configs(task)
    tyro.cli(help_type, args=["--help"], prog=f"canter train {task}", default=help_type(task=task, env=env, agent=agent),
             config=(tyro.conf.AvoidSubcommands,))


@dataclass(kw_only=True)
class EvalArgs:
    """Evaluate a trained policy: mean/std return, episode length, task metrics."""

    run_dir: tyro.conf.Positional[str]
    episodes: int = 100  # episodes to average over
    num_envs: int = 64
    checkpoint: str | None = None  # default: RUN_DIR/checkpoint.pt
    photos: str | None = None  # tasks with photo backgrounds: "train", "unseen" (never trained on) or a folder of yours
    terrain_level: int | None = None  # terrain tasks: every env on this difficulty row, the curriculum frozen
    sub_terrain: str | None = None  # with --terrain-level: only blocks of this type (e.g. stairs_up)
    # velocity tasks: every env commanded (vx, vy, wz), m/s and rad/s, never redrawn
    command: tuple[float, float, float] | None = None
    terrain_grid: bool = False  # terrain tasks: envs spread over every level and type, scored per block (table, JSON)
    plot: str | None = None  # with --terrain-grid: a PNG heat map of the share that walked out, by level and type
    # end every episode after this many seconds of env time (default: the task's episode length)
    episode_length_s: float | None = None
    # act in a registered task's env as registered, without the run's --env.* overrides: another task's (e.g. a
    # hand-cube policy on hand-cube-dr's randomized physics) or the run's own; its observations and actions must fit
    task: str | None = None
    # act on actions sampled from the policy (Gaussian, or softmax of a categorical policy's logits;
    # seeded, so a repeat is the same) instead of its deterministic action (the mean, or the argmax)
    stochastic: bool = False
    json: bool = False  # print the result as JSON instead of a table

    def run(self, rest: list[str]) -> int:
        from canter.cli.play_eval import eval_main

        return eval_main(self)


@dataclass(kw_only=True)
class PlayArgs:
    """Run a trained policy, optionally recording a video of env 0 (offscreen rendering)."""

    run_dir: tyro.conf.Positional[str]
    num_envs: int = 16
    steps: int | None = None  # env steps to run (default: one episode length)
    video: str | None = None  # write an mp4 of env 0 here (offscreen MuJoCo renderer)
    width: int = 640
    height: int = 480
    camera: str | None = None  # a camera of the model (default: the first one, else free)
    strip: str | None = None  # with --video: also a PNG of 8 frames evenly spaced over the video, side by side
    checkpoint: str | None = None
    photos: str | None = None  # tasks with photo backgrounds: "train", "unseen" (never trained on) or a folder of yours
    terrain_level: int | None = None  # terrain tasks: every env on this difficulty row, the curriculum frozen
    sub_terrain: str | None = None  # with --terrain-level: only blocks of this type (e.g. stairs_up)
    # velocity tasks: every env commanded (vx, vy, wz), m/s and rad/s, never redrawn
    command: tuple[float, float, float] | None = None
    task: str | None = None  # act in a registered task's env as registered (the run's own: without its --env.* overrides), as canter eval --task

    def run(self, rest: list[str]) -> int:
        from canter.cli.play_eval import play_main

        return play_main(self)


def train_main(argv: list[str]) -> int:
    """`canter train ARGV` (for callers that hold the arguments after the verb)."""
    from canter.cli.main import main

    return main(["train", *argv])


def eval_main(argv: list[str]) -> int:
    """`canter eval ARGV`."""
    from canter.cli.main import main

    return main(["eval", *argv])
