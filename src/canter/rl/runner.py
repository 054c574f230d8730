"""The on-policy runner: collect a rollout, learn from it, log, checkpoint; repeat.

It sees the env only through the VecEnv protocol. One host synchronization per iteration, for the
statistics that are logged. With the cpu physics backend, rollouts run torch on one thread so that
MuJoCo's thread pool has the cores (see canter.core.device.torch_threads); learning gets them back.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import torch

from canter.core.device import available_cores, torch_threads
from canter.core.errors import ConfigError
from canter.envs.vec_env import VecEnv
from canter.rl.algorithm import OnPolicyAlgorithm
from canter.rl.checkpoint import load_checkpoint, save_atomic
from canter.rl.config import AlgoCfg, PolicyCfg
from canter.rl.factory import make_algorithm
from canter.rl.logger import Logger

CHECKPOINT = "checkpoint.pt"


@dataclass(kw_only=True)
class RunnerCfg:
    """The agent: policy, algorithm and the training loop's knobs.

    max_iterations: iterations of (rollout + update) to reach; max_time_s: stop earlier after this
        many seconds of wall time (None: no limit). save_interval: iterations between snapshots
        (checkpoint.pt is rewritten at every save and at the end).
    rollout_threads: torch threads while collecting (0: one thread when the physics runs on the
        CPU's thread pool, else all cores). learn_threads: torch threads while learning (0: all).
    """

    policy: PolicyCfg = field(default_factory=PolicyCfg)
    algo: AlgoCfg = field(default_factory=AlgoCfg)
    max_iterations: int = 300
    max_time_s: float | None = None
    save_interval: int = 50
    rollout_threads: int = 0
    learn_threads: int = 0

    def __post_init__(self) -> None:
        if self.max_iterations < 1:
            raise ConfigError(f"max_iterations: must be >= 1, got {self.max_iterations}")
        if self.save_interval < 1:
            raise ConfigError(f"save_interval: must be >= 1, got {self.save_interval}")
        if self.max_time_s is not None and not self.max_time_s > 0:
            raise ConfigError(f"max_time_s: must be > 0, got {self.max_time_s}")


class OnPolicyRunner:
    def __init__(self, env: VecEnv, cfg: RunnerCfg, run_dir: Path, *, seed: int, cpu_physics: bool, rank: int = 0):
        self.env = env
        self.cfg = cfg
        self.run_dir = Path(run_dir)
        self.rank = rank
        self.algorithm: OnPolicyAlgorithm = make_algorithm(env, cfg.policy, cfg.algo, seed=seed)
        self.iteration = 0
        self.wall_time_s = 0.0
        self.history: list[dict[str, float]] = []
        cores = available_cores()
        self.rollout_threads = cfg.rollout_threads or (1 if cpu_physics else cores)
        self.learn_threads = cfg.learn_threads or cores

    # --- checkpoints --------------------------------------------------------------------------
    def save(self, path: Path | None = None) -> Path:
        policy = self.algorithm.policy
        payload = {
            "iteration": self.iteration,
            "wall_time_s": self.wall_time_s,
            "algorithm": self.algorithm.state_dict(),
            "hidden_states": policy.hidden_states(self.env.num_envs) if policy.is_recurrent else None,
            "env": self.env.state_dict(),
            "history": self.history,
        }
        return save_atomic(payload, path or self.run_dir / CHECKPOINT)

    def load(self, path: Path) -> None:
        payload = load_checkpoint(path, map_location=self.env.device)
        self.algorithm.load_state_dict(payload["algorithm"])
        if payload.get("hidden_states") is not None:
            self.algorithm.policy.set_hidden_states(*payload["hidden_states"])
        self.env.load_state_dict(payload["env"])
        self.iteration = int(payload["iteration"])
        self.wall_time_s = float(payload["wall_time_s"])
        self.history = list(payload["history"])

    # --- training -----------------------------------------------------------------------------
    def learn(self, logger: Logger | None = None) -> dict[str, float]:
        """Train until max_iterations or max_time_s; returns the last iteration's statistics."""
        env, algorithm = self.env, self.algorithm
        obs = env.get_observations() if self.iteration > 0 else env.reset()[0]
        algorithm.train_mode()
        last: dict[str, float] = {}
        start_wall = self.wall_time_s
        session_start = time.perf_counter()
        while self.iteration < self.cfg.max_iterations:
            if self.cfg.max_time_s is not None and self.wall_time_s - start_wall >= self.cfg.max_time_s:
                break
            obs, last = self._iteration(obs, logger)
            self.wall_time_s = start_wall + time.perf_counter() - session_start
            self.iteration += 1
            if self.rank == 0 and (self.iteration % self.cfg.save_interval == 0 or self.iteration == self.cfg.max_iterations):
                self.save()
        if self.rank == 0:
            self.save()
        return last

    def _iteration(self, obs: dict[str, torch.Tensor], logger: Logger | None) -> tuple[dict[str, torch.Tensor], dict[str, float]]:
        env, algorithm = self.env, self.algorithm
        device = env.device
        num_steps = algorithm.cfg.num_steps_per_env
        return_sum = torch.zeros((), device=device)
        length_sum = torch.zeros((), device=device)
        episodes = torch.zeros((), device=device)
        log_sums: dict[str, torch.Tensor] = {}
        log_counts: dict[str, int] = {}
        step_time = inference_time = 0.0
        start = time.perf_counter()
        with torch_threads(self.rollout_threads), torch.no_grad():
            for _ in range(num_steps):
                t0 = time.perf_counter()
                actions = algorithm.act(obs)
                _sync(device)
                t1 = time.perf_counter()
                obs, rewards, terminated, truncated, extras = env.step(actions)
                _sync(device)
                t2 = time.perf_counter()
                algorithm.process_env_step(rewards, terminated, truncated, extras)
                inference_time += t1 - t0
                step_time += t2 - t1
                done = (terminated | truncated).float()
                return_sum += torch.sum(extras["episode_return"] * done)
                length_sum += torch.sum(extras["episode_length"] * done)
                episodes += done.sum()
                for key, value in extras.get("log", {}).items():
                    log_sums[key] = log_sums.get(key, 0.0) + torch.as_tensor(value, device=device, dtype=torch.float32)
                    log_counts[key] = log_counts.get(key, 0) + 1
            algorithm.compute_returns(obs)
        collect_time = time.perf_counter() - start
        with torch_threads(self.learn_threads):
            losses = algorithm.update()
        iteration_time = time.perf_counter() - start
        # the one host synchronization of the iteration
        n_episodes = float(episodes)
        transitions = env.num_envs * num_steps
        stats = {
            "mean_return": float(return_sum) / n_episodes if n_episodes else float("nan"),
            "mean_episode_length": float(length_sum) / n_episodes if n_episodes else float("nan"),
            "episodes": n_episodes,
            "step_fps": transitions / step_time,
            "step_inference_fps": transitions / (step_time + inference_time),
            "total_fps": transitions / iteration_time,
            "iteration_time_s": iteration_time,
            "collect_time_s": collect_time,
            "learn_time_s": iteration_time - collect_time,
        }
        scalars = {f"Train/{k}": v for k, v in stats.items() if k.startswith(("mean_", "episodes"))}
        scalars.update({f"Perf/{k}": v for k, v in stats.items() if k.endswith(("fps", "_s"))})
        scalars.update({f"Loss/{k}": float(v) for k, v in losses.items()})
        scalars.update({k: float(v) / log_counts[k] for k, v in log_sums.items()})
        curve = {
            "iteration": float(self.iteration),
            "wall_time_s": self.wall_time_s + iteration_time,
            "env_steps": float((self.iteration + 1) * transitions),
            "mean_return": stats["mean_return"],
            "mean_episode_length": stats["mean_episode_length"],
            "step_fps": stats["step_fps"],
            "step_inference_fps": stats["step_inference_fps"],
            "total_fps": stats["total_fps"],
        }
        if self.rank == 0:
            self.history.append(curve)
        if logger is not None:
            logger.log_iteration(self.iteration, scalars, curve)
        return obs, {**stats, **{k: float(v) for k, v in losses.items()}}


def _sync(device: torch.device) -> None:
    """Make wall-clock timing honest on asynchronous devices (a no-op on the CPU)."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
