"""From command-line arguments to a built env and runner, and from a run directory back to them.

A run directory keeps `command.json` (the exact train arguments), `config.yaml` (the resolved env and
agent configs, for people), `checkpoint.pt`, TensorBoard event files, `progress.csv` and
`training_curve.png`. Everything needed to rebuild the run is in `command.json`: resuming or
evaluating re-parses it, so overrides given at training time apply again.
"""

from __future__ import annotations

import dataclasses
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import tyro
import yaml

from canter.core.device import resolve_device
from canter.core.errors import CanterError, ConfigError
from canter.core.rng import derive_seed
from canter.envs.env_cfg import EnvCfg
from canter.envs.manager_env import ManagerBasedRLEnv
from canter.rl import distributed
from canter.rl.distributed import DistInfo
from canter.rl.runner import RunnerCfg
from canter.tasks import REGISTRY

COMMAND_FILE = "command.json"


@dataclass(kw_only=True)
class TrainArgs:
    """canter train TASK [options] [--env.FIELD VALUE ...] [--agent.FIELD VALUE ...]"""

    num_envs: int | None = None  # parallel envs (default: the task's)
    device: str = "cpu"  # cpu | cuda | cuda:N | auto
    backend: Literal["cpu", "warp"] = "cpu"  # physics: MuJoCo C on a thread pool, or MuJoCo Warp
    seed: int = 0
    max_iterations: int | None = None  # default: the task's agent config
    max_time: float | None = None  # stop after this many seconds of training
    run_dir: str | None = None  # default: runs/<task>-<date>-<time>
    algo: Literal["ppo", "a2c"] | None = None
    model: str | None = None  # a different MJCF for the task's robot
    resume: str | None = None  # continue the run in this directory
    quiet: bool = False  # no start-up tables
    nproc: int = 1  # processes on this machine (torch.distributed through torchrun); --num-envs is the total
    dist_timeout: float = 300.0  # seconds a rank waits in a collective for another rank before failing
    env: EnvCfg  # any field of the task's env config, e.g. --env.rewards.alive.weight 2.0
    agent: RunnerCfg  # any field of the agent config, e.g. --agent.algo.learning-rate 3e-4


def parse_train_args(task: str, argv: list[str]) -> TrainArgs:
    spec = REGISTRY.get(task)
    if spec.agent_cfg is None:
        raise CanterError(f"task {task!r} has no agent config to train with")
    default = TrainArgs(env=spec.env_cfg(), agent=spec.agent_cfg())
    # AvoidSubcommands: optional nested configs (noise, terrain) are plain flags, not subcommands
    args = tyro.cli(
        TrainArgs, default=default, args=argv, prog=f"canter train {task}", config=(tyro.conf.AvoidSubcommands,)
    )
    apply_shortcuts(args)
    return args


def apply_shortcuts(args: TrainArgs) -> None:
    """The top-level flags override the config fields they stand for."""
    if args.num_envs is not None:
        args.env.num_envs = args.num_envs
    if args.max_iterations is not None:
        args.agent.max_iterations = args.max_iterations
    if args.max_time is not None:
        args.agent.max_time_s = args.max_time
    if args.algo is not None:
        args.agent.algo.algo = args.algo
    if args.model is not None:
        args.env.model_path = args.model
    args.env.device = args.device
    args.env.sim.backend = args.backend
    args.agent.__post_init__()
    args.agent.algo.__post_init__()


def init_rank(args: TrainArgs) -> DistInfo:
    """Joins torchrun's process group when this process is one of its ranks (a no-op otherwise) and
    adapts args to the rank: its device (cuda:LOCAL_RANK on CUDA) and MuJoCo's thread pool sized to
    distributed.cores_per_process() (unless --env.sim.num-threads says otherwise)."""
    args.device = distributed.rank_device(args.device)
    args.env.device = args.device
    info = distributed.init(resolve_device(args.device), args.dist_timeout)
    if args.env.num_envs % info.world_size:
        raise ConfigError(f"num_envs: {args.env.num_envs} envs cannot be split evenly over {info.world_size} processes")
    if args.env.sim.num_threads == 0:
        args.env.sim.num_threads = distributed.cores_per_process()
    return info


def make_rank_env(args: TrainArgs, info: DistInfo, console: Any = None) -> ManagerBasedRLEnv:
    """This rank's env: num_envs / world_size envs seeded with derive_seed(seed, 2, rank)."""
    return make_env(args, rank=info.rank, num_envs=args.env.num_envs // info.world_size,
                    console=console if info.is_main else None)


def make_env(args: TrainArgs, rank: int = 0, num_envs: int | None = None, console: Any = None) -> ManagerBasedRLEnv:
    cfg = dataclasses.replace(args.env)
    cfg.seed = derive_seed(args.seed, 2, rank)
    if num_envs is not None:
        cfg.num_envs = num_envs
    return ManagerBasedRLEnv(cfg, console=console)


def new_run_dir(task: str, requested: str | None) -> Path:
    path = Path(requested) if requested else Path("runs") / f"{task}-{time.strftime('%Y%m%d-%H%M%S')}"
    if path.exists() and any(path.iterdir()):
        raise CanterError(f"run directory {path} exists and is not empty (use --resume {path} to continue it)")
    path.mkdir(parents=True, exist_ok=True)
    return path


def write_run_files(run_dir: Path, task: str, argv: list[str], args: TrainArgs) -> None:
    (run_dir / COMMAND_FILE).write_text(json.dumps({"task": task, "argv": argv}, indent=2))
    resolved = {"task": task, "seed": args.seed, "env": to_plain(args.env), "agent": to_plain(args.agent)}
    (run_dir / "config.yaml").write_text(yaml.safe_dump(resolved, sort_keys=False))


def read_command(run_dir: Path) -> tuple[str, list[str]]:
    path = Path(run_dir) / COMMAND_FILE
    if not path.is_file():
        raise CanterError(f"{run_dir} is not a Canter run directory (no {COMMAND_FILE})")
    try:
        data = json.loads(path.read_text())
        return str(data["task"]), [str(a) for a in data["argv"]]
    except (ValueError, KeyError, TypeError) as err:
        raise CanterError(f"corrupt {path}: {err}") from err


def pop_flag(argv: list[str], flag: str, default: str | None) -> str | None:
    """Removes `flag VALUE` (or flag=VALUE) from argv and returns VALUE (default when absent)."""
    for index, token in enumerate(argv):
        if token == flag:
            if index + 1 >= len(argv):
                raise CanterError(f"{flag} needs a value")
            value = argv[index + 1]
            del argv[index : index + 2]
            return value
        if token.startswith(flag + "="):
            del argv[index]
            return token.split("=", 1)[1]
    return default


def strip_flags(argv: list[str], flags: tuple[str, ...]) -> list[str]:
    """argv without the given flags and their values (e.g. --resume, --max-iterations)."""
    out, skip = [], False
    for token in argv:
        if skip:
            skip = False
            continue
        name = token.split("=", 1)[0]
        if name in flags:
            skip = "=" not in token
            continue
        out.append(token)
    return out


def to_plain(value: Any) -> Any:
    """A YAML-friendly copy of a config: dataclasses as dicts, functions as module:name."""
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
