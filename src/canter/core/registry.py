"""The explicit task table: each task names its env-config factory, its model and its agent config."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from canter.core.errors import CanterError, ConfigError

if TYPE_CHECKING:
    from canter.envs.env_cfg import EnvCfg

TaskKind = Literal["mujoco", "atari"]


@dataclass(frozen=True, kw_only=True)
class TaskSpec:
    """A registered task.

    env_cfg: returns a fresh EnvCfg each call. agent_cfg: returns a fresh agent config each call.
    max_return: the best return an episode can reach, where the task has one (for eval), else None.
    metrics: env -> {name: (num_envs,) tensor} measured every eval step and averaged (task metrics).
    episode_metrics: env -> {name: (num_envs,) tensor} valid for the envs whose episode just ended,
        read by eval at each episode's end and reported as mean, median and max over episodes (e.g.
        the goals reached in a row).
    expert: a scripted expert with full state access, built once per env: expert(env) returns a
        policy, policy(env) -> (num_envs, num_actions) actions for the env's current state (DAgger).
    kind: "mujoco" (a manager-based env on MuJoCo: env_cfg returns an EnvCfg) or "atari" (an Atari
        game: env_cfg returns a canter.envs.atari.AtariEnvCfg).
    teacher_task: a student task distilled from another task's trained policy: the task whose runs
        `--teacher RUN` may name (its env carries that task's observation groups for the teacher).
    """

    name: str
    description: str
    env_cfg: Callable[[], EnvCfg] | Callable[[], Any]
    agent_cfg: Callable[[], Any] | None = None
    max_return: float | None = None
    # per-step quantities `canter eval` averages over the evaluation, each (num_envs,) (e.g. errors)
    metrics: Callable[[Any], dict[str, Any]] | None = None
    episode_metrics: Callable[[Any], dict[str, Any]] | None = None
    expert: Callable[[Any], Callable[[Any], Any]] | None = None
    kind: TaskKind = "mujoco"
    teacher_task: str | None = None


class Registry:
    def __init__(self, tasks: list[TaskSpec]):
        self._tasks = {task.name: task for task in tasks}

    def get(self, name: str) -> TaskSpec:
        if name not in self._tasks:
            raise CanterError(f"unknown task {name!r} (registered: {', '.join(sorted(self._tasks))})")
        return self._tasks[name]

    def get_mujoco(self, name: str, command: str) -> TaskSpec:
        """The task `name` for a command that needs a MuJoCo task (one-line ConfigError for an Atari game)."""
        spec = self.get(name)
        if spec.kind != "mujoco":
            raise ConfigError(f"{command}: task {name!r} is an Atari game; this command needs a MuJoCo task")
        return spec

    def names(self, kind: TaskKind | None = None) -> list[str]:
        """Every task's name, or those of one kind ("mujoco": manager-based MuJoCo envs; "atari")."""
        return [name for name, task in self._tasks.items() if kind is None or task.kind == kind]

    def __iter__(self):
        return iter(self._tasks.values())
