"""`canter list [--json]`: the registered tasks with their model, observation and action sizes."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path


@dataclass(kw_only=True)
class ListArgs:
    """The registered tasks: model file, observation and action sizes, default env count."""

    json: bool = False  # print JSON instead of a table

    def run(self, rest: list[str]) -> int:
        return list_main(self)


def describe_tasks() -> list[dict[str, object]]:
    from canter.envs.atari import AtariEnv, AtariEnvCfg
    from canter.envs.manager_env import ManagerBasedRLEnv
    from canter.tasks import REGISTRY

    rows = []
    for spec in REGISTRY:
        cfg = spec.env_cfg()
        default_envs = cfg.num_envs
        cfg.num_envs = 1
        env = AtariEnv(cfg) if isinstance(cfg, AtariEnvCfg) else ManagerBasedRLEnv(cfg)
        rows.append(
            {
                "name": spec.name,
                "description": spec.description,
                "model_path": getattr(cfg, "model_path", None) or f"ale-py:{getattr(cfg, 'game', '')}",
                # a vector group's size, an image group's (C, H, W)
                "observation_sizes": {k: v[0] if len(v) == 1 else list(v) for k, v in env.observation_shapes.items()},
                "action_size": env.num_actions,
                "default_num_envs": default_envs,
                "control_hz": round(1.0 / env.step_dt, 3),
                "episode_length_s": getattr(cfg, "episode_length_s", env.max_episode_length * env.step_dt),
                "max_return": spec.max_return,
            }
        )
        env.close()
    return rows


def list_main(args: ListArgs) -> int:
    from rich.console import Console
    from rich.table import Table

    rows = describe_tasks()
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    # Names and models never wrap, so the table reads at 80 columns (a pipe, a log) as on a wide terminal;
    # the long descriptions go in a second table of their own, where they wrap.
    table = Table(title="Canter tasks", title_justify="left")
    table.add_column("name", no_wrap=True)
    table.add_column("model", no_wrap=True)
    table.add_column("observations")
    for column in ("actions", "envs", "Hz"):
        table.add_column(column, justify="right", no_wrap=True)
    about = Table(title="What each task is", title_justify="left", show_lines=True)
    about.add_column("name", no_wrap=True)
    about.add_column("description")
    for row in rows:
        obs = ", ".join(f"{k}: {'x'.join(map(str, v)) if isinstance(v, list) else v}"
                        for k, v in row["observation_sizes"].items())  # type: ignore[union-attr]
        table.add_row(
            str(row["name"]),
            Path(str(row["model_path"])).name,
            obs,
            str(row["action_size"]),
            str(row["default_num_envs"]),
            f"{row['control_hz']:g}",
        )
        about.add_row(str(row["name"]), str(row["description"]))
    console = Console()
    console.print(table)
    console.print(about)
    return 0
