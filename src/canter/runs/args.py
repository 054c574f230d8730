"""Train arguments: the top-level flags of `canter train`, the task's env and agent configs with
their `--env.*` / `--agent.*` overrides, and what turns them into an env for this process (rank).

`TrainFlags` is what a person types besides overrides (each None means "the task's default");
`build_train_args(task, flags, overrides)` resolves flags and overrides into `TrainArgs`, the
configs a run is built from. `command.json` stores exactly (task, flags, overrides), so a run is
rebuilt by calling build_train_args again (canter.runs.rundir).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from canter.core.errors import CanterError, ConfigError
from canter.core.validate import validate_tree
from canter.runs.parsing import parse, stray_options

if TYPE_CHECKING:
    from canter.envs.atari import AtariEnv, AtariEnvCfg
    from canter.envs.env_cfg import EnvCfg
    from canter.envs.manager_env import ManagerBasedRLEnv
    from canter.rl.distributed import DistInfo
    from canter.rl.runner import RunnerCfg


@dataclass(kw_only=True)
class TrainFlags:
    """The flags of `canter train` that shape a run (None: the task's default)."""

    num_envs: int | None = None  # parallel envs, the total over processes (default: the task's)
    device: str | None = None  # cpu | cuda | cuda:N | auto (default: cpu)
    backend: Literal["cpu", "warp"] | None = None  # physics: MuJoCo C on a thread pool, or MuJoCo Warp (default: cpu)
    seed: int | None = None  # default: 0
    max_iterations: int | None = None  # default: the task's agent config
    max_time: float | None = None  # stop after this many seconds of training
    algo: Literal["ppo", "a2c", "dagger", "ga3c"] | None = None  # default: the task's agent config
    model: str | None = None  # a different MJCF for the task's robot
    teacher: str | None = None  # dagger: imitate this trained run's policy instead of the task's scripted expert
    init_from: str | None = None  # start from this trained run's policy (its inputs may be a prefix of this task's)
    init_fresh_optimizer: bool = False  # with --init-from: Adam and the learning rate afresh, not the source's
    photos: str | None = None  # tasks with photo backgrounds: "train" (default), "unseen" or a folder of your photos
    quiet: bool = False  # no start-up tables


DIST_TIMEOUT = 300.0  # default seconds a rank waits in a collective for another rank before failing
# flags and config fields that may differ when a run is resumed: the budget and the logging
RESUMABLE_FLAGS = ("max_iterations", "max_time", "quiet")
RESUMABLE_FIELDS = ("agent.max_iterations", "agent.max_time_s", "agent.save_interval", "agent.keep_snapshots")


@dataclass(kw_only=True)
class TrainArgs:
    """A resolved run: the task, the flags' values and the configs they were applied to."""

    task: str
    seed: int = 0
    device: str = "cpu"
    backend: Literal["cpu", "warp"] = "cpu"
    quiet: bool = False
    dist_timeout: float = DIST_TIMEOUT  # seconds a rank waits in a collective for another rank before failing
    teacher: str | None = None  # dagger: a trained run whose policy labels the states (else the task's expert)
    init_from: str | None = None  # a trained run (or checkpoint file) whose policy the new one starts from
    init_fresh_optimizer: bool = False  # with init_from: a fresh optimizer (else the source's, grown with the network)
    env: EnvCfg | AtariEnvCfg  # a MuJoCo task's, or an Atari game's (canter.envs.atari)
    agent: RunnerCfg


@dataclass(kw_only=True)
class Overrides:
    """Any field of the task's configs: --env.rewards.alive.weight 2.0, --agent.algo.learning-rate 3e-4.

    (tyro reads these annotations at parse time; the config modules are imported by then.)"""

    env: EnvCfg
    agent: RunnerCfg


def _import_config_types() -> None:
    """Puts EnvCfg and RunnerCfg where tyro resolves Overrides' annotations (this module's globals),
    importing torch only when a train command line is actually parsed."""
    from canter.envs.env_cfg import EnvCfg
    from canter.rl.runner import RunnerCfg

    globals().update(EnvCfg=EnvCfg, RunnerCfg=RunnerCfg)


def _overrides_type(env: Any) -> type:
    """The dataclass tyro parses overrides into: Overrides, or the same with the env config's own type
    (an Atari game's AtariEnvCfg)."""
    from canter.envs.env_cfg import EnvCfg

    if isinstance(env, EnvCfg):
        return Overrides
    from canter.rl.runner import RunnerCfg

    return dataclasses.make_dataclass(f"Overrides{type(env).__name__}", [("env", type(env)), ("agent", RunnerCfg)],
                                      kw_only=True)


def task_configs(task: str) -> tuple[EnvCfg, RunnerCfg]:
    """Fresh default env and agent configs of a registered task (CanterError if unknown)."""
    from canter.tasks import REGISTRY

    spec = REGISTRY.get(task)
    if spec.agent_cfg is None:
        raise CanterError(f"task {task!r} has no agent config to train with")
    return spec.env_cfg(), spec.agent_cfg()


def make_overrides(env: Any, agent: RunnerCfg) -> Any:
    """The overrides dataclass (see _overrides_type) holding `env` and `agent`."""
    return _overrides_type(env)(env=env, agent=agent)


def parse_overrides(task: str, overrides: list[str], base: Any = None) -> Any:
    """`--env.*` / `--agent.*` tokens applied to the task's configs (or to `base`)."""
    import tyro

    _import_config_types()
    if base is None:
        env, agent = task_configs(task)
        base = make_overrides(env, agent)
    if not overrides:
        return base
    # AvoidSubcommands: optional nested configs (noise, terrain) are plain flags, not subcommands
    return parse(type(base), overrides, prog=f"canter train {task}", default=base,
                 config=(tyro.conf.AvoidSubcommands,))


def sets_schedule(tokens: list[str]) -> bool:
    """Whether a command line's overrides choose the learning-rate schedule themselves."""
    return any(token.startswith("--agent.algo.schedule") for token in tokens)


def build_train_args(task: str, flags: TrainFlags, overrides: list[str], *, dist_timeout: float = DIST_TIMEOUT) -> TrainArgs:
    """TrainArgs of `task` with the overrides, then the flags on top (they win)."""
    configs = parse_overrides(task, overrides)
    args = TrainArgs(task=task, env=configs.env, agent=configs.agent, dist_timeout=dist_timeout)
    apply_flags(args, flags)
    algo = args.agent.algo
    if algo.algo == "ga3c" and algo.schedule == "linear" and not sets_schedule(overrides):
        # a task's linear default (Atari's PPO) does not apply: GA3C keeps its rate fixed; asked for, it is refused
        algo.schedule = "fixed"
    return args


def apply_flags(args: TrainArgs, flags: TrainFlags) -> None:
    """The top-level flags override the config fields they stand for."""
    if flags.seed is not None:
        args.seed = flags.seed
    # --device and --backend win; without them the overrides that stand for them (--env.device,
    # --env.sim.backend) choose, instead of being overwritten with the defaults below
    args.device = flags.device if flags.device is not None else str(args.env.device)
    sim = getattr(args.env, "sim", None)
    args.backend = flags.backend if flags.backend is not None else sim.backend if sim is not None else "cpu"
    args.quiet = flags.quiet
    if flags.num_envs is not None:
        args.env.num_envs = flags.num_envs
    if flags.max_iterations is not None:
        args.agent.max_iterations = flags.max_iterations
    if flags.max_time is not None:
        args.agent.max_time_s = flags.max_time
    if flags.algo is not None:
        args.agent.algo.algo = flags.algo
    if flags.teacher is not None:
        args.teacher = flags.teacher
    if flags.init_from is not None:
        args.init_from = flags.init_from
    args.init_fresh_optimizer = flags.init_fresh_optimizer
    from canter.envs.env_cfg import EnvCfg

    if isinstance(args.env, EnvCfg):
        if flags.model is not None:
            args.env.model_path = flags.model
        if flags.photos is not None:
            apply_photos(args.env, flags.photos)
        args.env.sim.backend = args.backend
    else:  # an Atari game: no MuJoCo model, physics backend or photos
        for name, value in (("model", flags.model), ("photos", flags.photos)):
            if value is not None:
                raise ConfigError(f"--{name}: task {args.task!r} is an Atari game, it has no {name}")
        if args.backend != "cpu":
            raise ConfigError(f"--backend: task {args.task!r} is an Atari game (ale-py emulators on CPU threads), "
                              "it has no physics backend")
    args.env.device = args.device
    validate_tree(args.env, "env")
    validate_tree(args.agent, "agent")


def parse_train_args(task: str, argv: list[str]) -> TrainArgs:
    """TrainArgs from a command line of train flags and overrides (what `canter bench train` and
    friends pass on to every run); one-line errors for anything else."""
    flags, rest = parse(TrainFlags, argv, prog=f"canter train {task}", unknown=True)
    bad = stray_options(rest)
    if bad:
        raise CanterError(f"unrecognized options: {' '.join(bad)}")
    return build_train_args(task, flags, rest)


def check_train_args(args: TrainArgs, world_size: int = 1) -> None:
    """What only shows once training starts, checked before anything is written."""
    num_envs = args.env.num_envs
    if num_envs < 1:
        raise ConfigError(f"num_envs: must be >= 1, got {num_envs}")
    if num_envs % world_size:
        raise ConfigError(f"num_envs: {num_envs} envs cannot be split evenly over {world_size} processes")
    algo = args.agent.algo
    if args.init_from is not None:
        from canter.runs.init_from import checkpoint_path

        if algo.algo == "ga3c":
            raise ConfigError("--init-from: not with algo ga3c (its runner starts from scratch)")
        checkpoint_path(args.init_from)  # a missing checkpoint fails here, before anything is built
    elif args.init_fresh_optimizer:
        raise ConfigError("--init-fresh-optimizer: only with --init-from (a new run's optimizer is always fresh)")
    if algo.cuda_graph:
        from canter.rl.cuda_graph import check_cuda_graph

        check_cuda_graph(algo, str(getattr(args.env, "device", "cpu")), world_size)
    if algo.algo == "ga3c":
        from canter.runs.ga3c import check_ga3c_args

        check_ga3c_args(args, world_size)
    transitions = num_envs // world_size * algo.num_steps_per_env
    if algo.algo == "ppo" and algo.num_mini_batches > transitions:
        raise ConfigError(f"agent.algo.num_mini_batches: {algo.num_mini_batches} minibatches exceed the {transitions} "
                          f"transitions of a rollout ({num_envs // world_size} envs x {algo.num_steps_per_env} steps)")


def apply_photos(env_cfg: EnvCfg | AtariEnvCfg, source: str, *, as_they_are: bool = False) -> None:
    """Every observation term that composes camera images over photos (a "photos" parameter, e.g.
    canter.sensors.photo_terms.PhotoCameraImage) takes them from `source`: "train", "unseen" (photos
    kept out of training) or a folder of the user's own PNG/JPEG files; `as_they_are` also switches
    off the training-time recoloring of the photos (`canter eval/play --photos`). ConfigError if the
    task has none."""
    groups = getattr(env_cfg, "observations", {})
    terms = [term for group in groups.values() for term in group.terms.values() if "photos" in term.params]
    if not terms:
        raise ConfigError("--photos: this task composes no camera image over photos")
    for term in terms:
        term.params["photos"] = source
        if as_they_are:
            term.params["photo_recolor"] = False


def apply_command(env_cfg: EnvCfg | AtariEnvCfg, velocity: tuple[float, float, float]) -> str | None:
    """Every velocity command of the task holds (vx, vy, wz) for every env, never redrawn (`canter
    play/eval --command`: a video or a score at one speed). Command-range curricula of those commands
    go (there is no range left to widen). ConfigError if the task has no velocity command. Returns a
    note when the velocity lies outside the widest range the task draws its commands from (the command
    curriculum's limit included): the policy never trained there."""
    from canter.mdp import commands
    from canter.mdp.locomotion import command_velocity_curriculum

    held = getattr(env_cfg, "commands", {})
    names = [name for name, term in held.items()
             if isinstance(term, (commands.UniformVelocityCommandCfg, commands.ConstantVelocityCommandCfg))]
    if not names:
        raise ConfigError("--command: this task has no velocity command")
    note = _outside_trained_range(env_cfg, held, names, velocity)
    for name in names:
        held[name] = commands.ConstantVelocityCommandCfg(velocity=tuple(float(v) for v in velocity))  # type: ignore[arg-type]
        held[name].validate()
    curriculum = getattr(env_cfg, "curriculum", {})
    for key in [key for key, term in curriculum.items()
                if term.func is command_velocity_curriculum and term.params.get("command_name") in names]:
        del curriculum[key]
    return note


def _outside_trained_range(env_cfg: Any, held: dict[str, Any], names: list[str],
                           velocity: tuple[float, float, float]) -> str | None:
    """The note of apply_command: which of (vx, vy, wz) lie outside every range the task's velocity
    commands draw from, e.g. '--command vx 2 m/s: outside what this task trains on (vx [-1, 1.5]); ...';
    None when all lie inside."""
    from canter.mdp import commands
    from canter.mdp.locomotion import command_velocity_curriculum

    ranges: list[tuple[tuple[float, float], ...]] = []
    for name in names:
        term = held[name]
        if not isinstance(term, commands.UniformVelocityCommandCfg):
            return None  # a task that holds one velocity already: no range to compare with
        x_low, x_high = term.lin_vel_x
        for curriculum in getattr(env_cfg, "curriculum", {}).values():
            if curriculum.func is command_velocity_curriculum and curriculum.params.get("command_name") == name:
                limit = curriculum.params.get("max_lin_vel_x", (x_low, x_high))
                x_low, x_high = min(x_low, limit[0]), max(x_high, limit[1])
        ranges.append(((x_low, x_high), term.lin_vel_y, term.ang_vel_z))
    given, trained = [], []
    for axis, (label, unit) in enumerate((("vx", "m/s"), ("vy", "m/s"), ("wz", "rad/s"))):
        low = min(r[axis][0] for r in ranges)
        high = max(r[axis][1] for r in ranges)
        if not low - 1e-9 <= velocity[axis] <= high + 1e-9:
            given.append(f"{label} {velocity[axis]:g} {unit}")
            trained.append(f"{label} [{low:g}, {high:g}]")
    if not given:
        return None
    return (f"--command {', '.join(given)}: outside what this task trains on ({', '.join(trained)}); "
            "the policy never saw such a command")


def task_expert(task: str, args: TrainArgs, env: Any) -> Any:
    """What algo "dagger" imitates (None for other algorithms): the policy of the teacher run
    (args.teacher) or the task's scripted expert, built for `env` (canter.rl.dagger)."""
    if args.agent.algo.algo != "dagger":
        if args.teacher is not None:
            raise ConfigError("--teacher: only algo dagger learns from a teacher (add --algo dagger)")
        return None
    from canter.rl.dagger import EnvExpert
    from canter.rl.factory import check_action_space
    from canter.tasks import REGISTRY

    check_action_space(env, args.agent.policy, args.agent.algo)  # before looking for an expert to imitate

    if args.teacher is not None:
        from canter.runs.load import teacher_expert

        return teacher_expert(args.teacher, task, env)
    spec = REGISTRY.get(task)
    if spec.expert is None:
        if spec.teacher_task is not None:
            raise ConfigError(f"task {task!r} learns from a trained {spec.teacher_task!r} run: name it with --teacher RUN_DIR")
        raise ConfigError(f"algo dagger: task {task!r} has no scripted expert; name a trained run with --teacher RUN_DIR")
    return EnvExpert(spec.expert(env), env)


def init_rank(args: TrainArgs) -> DistInfo:
    """Joins torchrun's process group when this process is one of its ranks (a no-op otherwise) and
    adapts args to the rank: its device (cuda:LOCAL_RANK on CUDA) and MuJoCo's thread pool sized to
    distributed.cores_per_process() (unless --env.sim.num-threads says otherwise)."""
    from canter.core.device import resolve_device
    from canter.rl import distributed

    args.device = distributed.rank_device(args.device)
    args.env.device = args.device
    check_train_args(args, distributed.launched_world_size())
    info = distributed.init(resolve_device(args.device), args.dist_timeout)
    sim = getattr(args.env, "sim", None)  # an Atari game has its emulator threads instead
    threads_owner, field = (sim, "num_threads") if sim is not None else (args.env, "num_threads")
    if getattr(threads_owner, field) == 0:
        setattr(threads_owner, field, distributed.cores_per_process())
    return info


def cpu_physics(args: TrainArgs) -> bool:
    """Whether the physics runs on MuJoCo's CPU thread pool while torch waits (the cpu backend), so
    that rollouts keep torch on one thread. Not for an Atari game: its emulators run only inside step()."""
    return args.backend == "cpu" and hasattr(args.env, "sim")


def make_rank_env(args: TrainArgs, info: DistInfo, console: Any = None) -> ManagerBasedRLEnv | AtariEnv:
    """This rank's env: num_envs / world_size envs seeded with derive_seed(seed, 2, rank)."""
    return make_env(args, rank=info.rank, num_envs=args.env.num_envs // info.world_size,
                    console=console if info.is_main else None)


def make_env(
    args: TrainArgs, rank: int = 0, num_envs: int | None = None, console: Any = None
) -> ManagerBasedRLEnv | AtariEnv:
    from canter.core.rng import derive_seed
    cfg = dataclasses.replace(args.env)
    cfg.seed = derive_seed(args.seed, 2, rank)
    if num_envs is not None:
        cfg.num_envs = num_envs
    return build_env(cfg, console)


def build_env(cfg: EnvCfg | AtariEnvCfg, console: Any = None) -> ManagerBasedRLEnv | AtariEnv:
    """The env a config describes: a ManagerBasedRLEnv (MuJoCo), or an AtariEnv."""
    from canter.envs.env_cfg import EnvCfg

    if not isinstance(cfg, EnvCfg):
        from canter.envs.atari import AtariEnv

        return AtariEnv(cfg, console=console)
    from canter.envs.manager_env import ManagerBasedRLEnv

    return ManagerBasedRLEnv(cfg, console=console)


def mujoco_env_cfg(args: TrainArgs, command: str) -> EnvCfg:
    """args.env for a command that needs a MuJoCo task; one-line ConfigError for an Atari game."""
    from canter.envs.env_cfg import EnvCfg

    if not isinstance(args.env, EnvCfg):
        raise ConfigError(f"{command}: task {args.task!r} is an Atari game; this command needs a MuJoCo task")
    return args.env


def to_plain(value: Any) -> Any:
    """A YAML/JSON-friendly copy of a config: dataclasses as dicts, functions as module:name."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): to_plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_plain(v) for v in value]
    if callable(value):
        return f"{getattr(value, '__module__', '?')}:{getattr(value, '__qualname__', repr(value))}"
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return repr(value)


def changed_fields(before: Any, after: Any, prefix: str = "") -> list[str]:
    """Dotted names of the leaves where two plain configs (to_plain) differ."""
    if isinstance(before, dict) and isinstance(after, dict):
        out: list[str] = []
        for key in sorted(set(before) | set(after)):
            out += changed_fields(before.get(key), after.get(key), f"{prefix}{key}.")
        return out
    same = before == after or (before != before and after != after)  # NaN equals NaN here
    return [] if same else [prefix.rstrip(".")]

