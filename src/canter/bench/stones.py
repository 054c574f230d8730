"""Stepping stones: success rate per difficulty level of the heuristic controller and of a trained
RL + QP policy (dog-stones), and what the QP costs inside the env step.

Success: the episode ends by reaching the far side (the `reached` termination), not by a fall, a
foot in a gap or the time limit. Every env runs exactly one episode on a fixed level (no
curriculum), on the stone columns of the terrain, `episodes` envs per level.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch

from canter.bench.report import machine_info
from canter.core.device import torch_threads
from canter.core.errors import CanterError, ConfigError
from canter.core.files import save_figure
from canter.envs.manager_env import ManagerBasedRLEnv
from canter.mdp.controller_action import QuadrupedControllerAction
from canter.rl.checkpoint import load_checkpoint
from canter.rl.runner import CHECKPOINT, OnPolicyRunner
from canter.runs.args import TrainArgs, cpu_physics, make_env, mujoco_env_cfg, parse_train_args
from canter.runs.rundir import read_command
from canter.terrains import StoneRowsCfg

TASK = "dog-stones"
STONE_TYPE = "stone_rows"


class HeuristicPolicy:
    """The heuristic controller as a policy of dog-stones: the zero action (no residual on top of
    the Raibert footholds and the CoM PD inside the controller action term)."""

    def __init__(self, num_actions: int):
        self.num_actions = num_actions

    def act_inference(self, obs: dict[str, torch.Tensor]) -> torch.Tensor:
        first = next(iter(obs.values()))
        return torch.zeros(first.shape[0], self.num_actions, device=first.device)

    def reset(self, done: torch.Tensor) -> None:
        """Stateless."""


def stones_args(run_dir: str | None, argv: list[str]) -> TrainArgs:
    """The train arguments of `run_dir` (a dog-stones run), or the task defaults plus `argv`."""
    if run_dir is None:
        return parse_train_args(TASK, [*argv, "--quiet"])
    command = read_command(run_dir)
    if command.task != TASK:
        raise CanterError(f"{run_dir} is a {command.task!r} run; the stepping-stone evaluation needs a {TASK!r} run")
    command.flags.quiet = True
    command.overrides += argv
    return command.train_args()


def build_level_env(args: TrainArgs, levels: list[int], episodes: int) -> ManagerBasedRLEnv:
    """An env of `episodes` envs per level in `levels`, each pinned to its level on a stone column."""
    terrain_cfg = mujoco_env_cfg(args, "bench stones").terrain
    stone_names = [
        name for name, sub in (terrain_cfg.sub_terrains.items() if terrain_cfg is not None else ())
        if isinstance(sub, StoneRowsCfg) and sub.proportion > 0
    ]
    if terrain_cfg is None or not stone_names:
        raise ConfigError(f"the run's terrain has no {STONE_TYPE!r} columns to evaluate on")
    bad = [level for level in levels if not 0 <= level < terrain_cfg.num_rows]
    if bad:
        raise ConfigError(f"--levels: {bad} outside 0..{terrain_cfg.num_rows - 1}")
    args.env.curriculum = {}
    env = make_env(args, num_envs=len(levels) * episodes)
    assert isinstance(env, ManagerBasedRLEnv)
    terrain = env.terrain
    assert terrain is not None and terrain.map is not None
    stone_cols = [c for c in range(terrain.num_cols) if terrain.map.names[terrain.map.types[0, c]] in stone_names]
    device = env.device
    index = torch.arange(env.num_envs, device=device)
    terrain.terrain_levels[:] = torch.tensor(levels, device=device).repeat_interleave(episodes)
    terrain.terrain_types[:] = torch.tensor(stone_cols, device=device)[index % len(stone_cols)]
    terrain.env_origins[:] = terrain.origins_grid[terrain.terrain_levels, terrain.terrain_types]
    return env


def run_episodes(env: ManagerBasedRLEnv, policy: Any, threads: int = 1) -> dict[str, torch.Tensor]:
    """One episode per env. Returns per env: success (bool), progress (m along +x at the end),
    length (steps), reason (index into env.termination_manager.names of the term that ended it)."""
    obs, _ = env.reset()
    n, device = env.num_envs, env.device
    finished = torch.zeros(n, dtype=torch.bool, device=device)
    success = torch.zeros_like(finished)
    reason = torch.full((n,), -1, dtype=torch.long, device=device)
    length = torch.zeros(n, dtype=torch.long, device=device)
    progress = torch.zeros(n, device=device)
    manager = env.termination_manager
    reached = manager.names.index("reached")
    with torch.no_grad(), torch_threads(threads):
        for step in range(env.max_episode_length + 1):
            origin_x = env.terrain.env_origins[:, 0] if env.terrain is not None else 0.0
            before = (env.scene.root_pos_w[:, 0] - origin_x).float()
            obs, _, terminated, truncated, _ = env.step(policy.act_inference(obs))
            done = (terminated | truncated) & ~finished
            policy.reset(terminated | truncated)
            first_term = torch.where(
                manager.term_dones.any(dim=0), manager.term_dones.float().argmax(dim=0), 0
            )
            reason = torch.where(done, first_term, reason)
            success |= done & manager.term_dones[reached]
            length = torch.where(done, step + 1, length)
            progress = torch.where(done, before, progress)
            finished |= done
            if bool(finished.all()):
                break
    return {"success": success, "progress": progress, "length": length, "reason": reason}


@dataclass(kw_only=True)
class LevelRow:
    """One stepping-stone level: success rate, mean progress (m) and the share of each ending."""

    level: int
    success_rate: float
    mean_progress_m: float
    endings: dict[str, float]


@dataclass(kw_only=True)
class StonesResult:
    """`canter bench stones`: per controller ("heuristic", "rl_qp"), one row per level."""

    task: str
    levels: list[int]
    episodes_per_level: int
    run_dir: str | None
    controllers: dict[str, list[LevelRow]] = field(default_factory=dict)
    machine: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The report's layout: the run facts, a list of level rows under each controller's name."""
        return {"task": self.task, "levels": self.levels, "episodes_per_level": self.episodes_per_level,
                "run_dir": self.run_dir, **{name: [asdict(r) for r in rows] for name, rows in self.controllers.items()},
                "machine": self.machine}


@dataclass(kw_only=True)
class CostRow:
    """dog-stones with one stance-force solver: env steps/s and the controller's and solver's shares."""

    env_steps_per_s: float
    controller_share: float
    solver_share: float
    ticks_per_env_step: int


@dataclass(kw_only=True)
class StonesCostResult:
    """`canter bench stones-cost`: the GRF QP against an even force split ("static")."""

    task: str
    num_envs: int
    steps: int
    qp: CostRow
    static: CostRow
    qp_slowdown: float
    machine: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def level_table(levels: list[int], episodes: int, outcome: dict[str, torch.Tensor], names: list[str]) -> list[LevelRow]:
    """Per level: success rate, mean progress and the share of each ending."""
    rows = []
    for k, level in enumerate(levels):
        part = slice(k * episodes, (k + 1) * episodes)
        reasons = outcome["reason"][part]
        rows.append(LevelRow(level=level, success_rate=float(outcome["success"][part].float().mean()),
                             mean_progress_m=float(outcome["progress"][part].mean()),
                             endings={name: float((reasons == i).float().mean()) for i, name in enumerate(names)}))
    return rows


def load_policy(run_dir: str, env: ManagerBasedRLEnv, args: TrainArgs, checkpoint: str | None) -> Any:
    """The deterministic policy of a run directory, for `env`."""
    from canter.runs.network import adopt_network

    payload = load_checkpoint(Path(checkpoint) if checkpoint else Path(run_dir) / CHECKPOINT)
    adopt_network(args.agent.policy, payload["algorithm"]["policy"])  # the network it was trained with
    runner = OnPolicyRunner(env, args.agent, Path(run_dir), seed=args.seed, cpu_physics=cpu_physics(args))
    runner.algorithm.policy.load_state_dict(payload["algorithm"]["policy"])
    runner.algorithm.eval_mode()
    return runner.algorithm.policy


def evaluate_stones(
    run_dir: str | None,
    levels: list[int] | None,
    episodes: int,
    checkpoint: str | None = None,
    log: Any = None,
) -> StonesResult:
    """Success per level of the heuristic, and of the run's policy when run_dir is given."""
    if episodes < 1:
        raise ConfigError(f"--episodes: must be >= 1, got {episodes}")
    args = stones_args(run_dir, [])
    assert args.env.terrain is not None
    levels = list(range(args.env.terrain.num_rows)) if not levels else list(levels)
    result = StonesResult(task=TASK, levels=levels, episodes_per_level=episodes, run_dir=run_dir)
    controllers = [("heuristic", None)] + ([("rl_qp", run_dir)] if run_dir is not None else [])
    for name, source in controllers:
        start = time.perf_counter()
        env = build_level_env(stones_args(run_dir, []), levels, episodes)
        policy = (
            HeuristicPolicy(env.num_actions) if source is None else load_policy(source, env, args, checkpoint)
        )
        outcome = run_episodes(env, policy)
        result.controllers[name] = level_table(levels, episodes, outcome, env.termination_manager.names)
        if log is not None:
            rates = ", ".join(f"{r.level}: {r.success_rate:.2f}" for r in result.controllers[name])
            log(f"{name}: success per level {rates} ({time.perf_counter() - start:.0f} s)")
    result.machine = machine_info()
    return result


def measure_cost(num_envs: int, steps: int, log: Any = None) -> StonesCostResult:
    """Env step FPS of dog-stones (zero actions = heuristic) with the QP body controller and with the
    QP replaced by an even force split ("static"), and the share of the step spent in the solver."""
    if num_envs < 1 or steps < 2:
        raise ConfigError("--num-envs must be >= 1 and --steps >= 2")
    rows: dict[str, CostRow] = {}
    for solver in ("qp", "static"):
        args = stones_args(None, ["--env.actions.controller.controller.body.solver", solver])
        args.env.num_envs = num_envs
        env = make_env(args)
        term = env.action_manager.term("controller")
        assert isinstance(term, QuadrupedControllerAction)
        policy = HeuristicPolicy(env.num_actions)
        obs, _ = env.reset()
        with torch.no_grad(), torch_threads(1):
            obs = env.step(policy.act_inference(obs))[0]  # warm-up
            term.timing, term.controller_seconds, term.controller.body.solve_seconds = True, 0.0, 0.0
            start = time.perf_counter()
            for _ in range(steps):
                obs = env.step(policy.act_inference(obs))[0]
            wall = time.perf_counter() - start
        rows[solver] = CostRow(env_steps_per_s=num_envs * steps / wall, controller_share=term.controller_seconds / wall,
                               solver_share=term.controller.body.solve_seconds / wall,
                               ticks_per_env_step=env.cfg.decimation // env.action_manager.physics_steps_per_tick)
        if log is not None:
            log(f"{solver}: {rows[solver].env_steps_per_s:,.0f} env steps/s")
    return StonesCostResult(task=TASK, num_envs=num_envs, steps=steps, qp=rows["qp"], static=rows["static"],
                            qp_slowdown=rows["static"].env_steps_per_s / rows["qp"].env_steps_per_s,
                            machine=machine_info())


def stones_markdown(result: StonesResult) -> str:
    """The success table: one row per level, a column per evaluated controller."""
    names = [n for n in ("heuristic", "rl_qp") if n in result.controllers]
    header = "| level | " + " | ".join(f"{n} success | {n} progress (m)" for n in names) + " |"
    lines = [header, "|" + "---|" * (1 + 2 * len(names))]
    for k, level in enumerate(result.levels):
        rows = [result.controllers[n][k] for n in names]
        cells = [f"{row.success_rate:.2f} | {row.mean_progress_m:.2f}" for row in rows]
        lines.append(f"| {level} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def plot_stones(result: StonesResult, path: Path) -> None:
    """Success rate vs level, one line per controller."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.5))
    labels = {"heuristic": "heuristic (Raibert + CoM PD) + QP", "rl_qp": "RL policy + QP"}
    for name in ("heuristic", "rl_qp"):
        if name in result.controllers:
            ax.plot(result.levels, [row.success_rate for row in result.controllers[name]], marker="o", label=labels[name])
    ax.set_xlabel("difficulty level (gap and height spread grow)")
    ax.set_ylabel("success rate")
    ax.set_ylim(-0.05, 1.05)
    ax.set_title(f"dog-stones: {result.episodes_per_level} episodes per level")
    ax.grid(alpha=0.3)
    ax.legend()
    save_figure(fig, path, dpi=120)
