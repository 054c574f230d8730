"""The on-policy runner: collect a rollout, learn from it, log, checkpoint; repeat.

It sees the env only through the VecEnv protocol. One host synchronization per iteration, for the
statistics that are logged. With the cpu physics backend, rollouts run torch on one thread so that
MuJoCo's thread pool has the cores (see canter.core.device.torch_threads); learning gets them back.

Under torch.distributed (canter.rl.distributed) every rank runs this loop on its own envs; the
statistics of an iteration are summed over ranks in one all-reduce (FPS figures add up, the mean
return covers every rank's episodes), the time budget is decided together, and checkpoints are
collective: every rank hands rank 0 its env state and generator, rank 0 alone writes the file (and
alone logs). Resuming needs the same world size; rank 0 reads the file and hands each rank its part.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from canter.core.device import torch_threads
from canter.core.errors import CanterError
from canter.core.profiling import section
from canter.core.validate import Validated, require_at_least, require_positive
from canter.envs.vec_env import VecEnv
from canter.rl import distributed
from canter.rl.algorithm import OnPolicyAlgorithm
from canter.rl.checkpoint import load_checkpoint, save_atomic
from canter.rl.config import AlgoCfg, PolicyCfg
from canter.rl.factory import make_algorithm
from canter.rl.logger import Logger

CHECKPOINT = "checkpoint.pt"


@dataclass(kw_only=True)
class RunnerCfg(Validated):
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

    config_name = "agent"

    def validate(self) -> None:
        require_at_least(self, "max_iterations", 1, integer=True)
        require_at_least(self, "save_interval", 1, integer=True)
        if self.max_time_s is not None:
            require_positive(self, "max_time_s")
        require_at_least(self, "rollout_threads", 0, integer=True)
        require_at_least(self, "learn_threads", 0, integer=True)


class OnPolicyRunner:
    """Trains `env`'s policy with cfg's algorithm; checkpoints and logs go to run_dir (rank 0).

    seed: the base seed (the env's own seed is set by whoever built it). cpu_physics: the physics
    runs on MuJoCo's CPU thread pool, so rollouts keep torch on one thread. Under torch.distributed
    the rank is this process's, and threads default to this machine's cores shared by its ranks.
    """

    def __init__(self, env: VecEnv, cfg: RunnerCfg, run_dir: Path, *, seed: int, cpu_physics: bool):
        self.env = env
        self.cfg = cfg
        self.run_dir = Path(run_dir)
        self.dist = distributed.info()
        self.rank = self.dist.rank
        self.algorithm: OnPolicyAlgorithm = make_algorithm(env, cfg.policy, cfg.algo, seed=seed, rank=self.rank)
        distributed.broadcast_module(self.algorithm.policy)
        self.iteration = 0
        self.wall_time_s = 0.0
        self.history: list[dict[str, float]] = []
        cores = distributed.cores_per_process()
        self.rollout_threads = cfg.rollout_threads or (1 if cpu_physics else cores)
        self.learn_threads = cfg.learn_threads or cores

    # --- checkpoints --------------------------------------------------------------------------
    def digest(self) -> str:
        """SHA-256 of the learned state every rank must hold bitwise identically: parameters,
        normalizer statistics, optimizer moments and the learning rate."""
        algorithm = self.algorithm
        tensors = list(algorithm.policy.state_dict().items())
        optimizer_state = algorithm.optimizer.state_dict()["state"]
        for index in sorted(optimizer_state):
            for key, value in sorted(optimizer_state[index].items()):
                if isinstance(value, torch.Tensor):
                    tensors.append((f"optimizer/{index}/{key}", value))
        tensors.append(("learning_rate", algorithm.learning_rate))
        return distributed.state_digest(tensors)

    def _rank_state(self) -> dict[str, Any]:
        """What differs between ranks: the env (state, generator, buffers), the algorithm's generator,
        recurrent memories; plus the digest of what must not differ."""
        policy = self.algorithm.policy
        return distributed.to_cpu({
            "env": self.env.state_dict(),
            "generator": self.algorithm.generator.get_state(),
            "hidden_states": policy.hidden_states(self.env.num_envs) if policy.is_recurrent else None,
            "num_envs": self.env.num_envs,
            "digest": self.digest(),
        })

    def save(self, path: Path | None = None) -> Path | None:
        """Writes the checkpoint (rank 0); returns its path, None on the other ranks.

        Collective under torch.distributed: every rank calls it at the same iteration. Ranks whose
        learned state differs bitwise from rank 0's stop the run with a CanterError.
        """
        part = self._rank_state()
        digests = distributed.all_gather_object(part["digest"])
        diverged = [rank for rank, digest in enumerate(digests) if digest != digests[0]]
        if diverged:
            raise CanterError(f"ranks diverged: the parameters of rank(s) {diverged} differ from rank 0's "
                              f"at iteration {self.iteration}")
        parts = distributed.gather_object(part)
        if parts is None:
            return None
        payload = {
            "iteration": self.iteration,
            "wall_time_s": self.wall_time_s,
            "algorithm": self.algorithm.state_dict(),
            "hidden_states": parts[0]["hidden_states"],
            "env": parts[0]["env"],
            "history": self.history,
            "world_size": len(parts),
            "ranks": parts,
        }
        return save_atomic(payload, path or self.run_dir / CHECKPOINT)

    def load(self, path: Path) -> None:
        """Restores a checkpoint written with this run's world size (else CanterError).

        Collective under torch.distributed: rank 0 reads the file and hands each rank the shared
        state and its own part, so the file need only exist on rank 0's machine.
        """
        world_size = self.dist.world_size
        shared = parts = error = None
        if self.rank == 0:
            try:
                shared, parts = _read_checkpoint(path, world_size, self.env.device if world_size == 1 else "cpu")
            except CanterError as err:
                error = str(err)
        error = distributed.broadcast_object(error)
        if error is not None:
            raise CanterError(error)
        shared = distributed.broadcast_object(shared)
        part = distributed.scatter_object(parts)
        if part.get("num_envs") is not None and int(part["num_envs"]) != self.env.num_envs:
            raise CanterError(f"{path} holds {part['num_envs']} envs per process, this run has {self.env.num_envs}")
        self.algorithm.load_state_dict(shared["algorithm"])
        self.algorithm.generator.set_state(part["generator"].cpu())
        if part.get("hidden_states") is not None:
            self.algorithm.policy.set_hidden_states(*part["hidden_states"])
        self.env.load_state_dict(part["env"])
        self.iteration = int(shared["iteration"])
        self.wall_time_s = float(shared["wall_time_s"])
        self.history = list(shared["history"])

    # --- training -----------------------------------------------------------------------------
    def learn(self, logger: Logger | None = None) -> dict[str, float]:
        """Train until max_iterations or max_time_s; returns the last iteration's statistics."""
        env, algorithm = self.env, self.algorithm
        obs = env.get_observations() if self.iteration > 0 else env.reset()[0]
        algorithm.train_mode()
        last: dict[str, float] = {}
        start_wall = self.wall_time_s
        session_start = time.perf_counter()
        max_time_s = self.cfg.max_time_s

        def time_is_up() -> bool:
            return max_time_s is not None and time.perf_counter() - session_start >= max_time_s

        saved = False
        while self.iteration < self.cfg.max_iterations:
            obs, last = self._iteration(obs, logger, should_stop=time_is_up)
            self.wall_time_s = start_wall + time.perf_counter() - session_start
            self.iteration += 1
            saved = self.iteration % self.cfg.save_interval == 0
            if saved:
                self.save()
            if last["stop"]:
                break
        if not saved:
            self.save()
        return last

    def _iteration(
        self, obs: dict[str, torch.Tensor], logger: Logger | None, should_stop: Callable[[], bool] | None = None
    ) -> tuple[dict[str, torch.Tensor], dict[str, float]]:
        """One rollout + update. Statistics are summed over ranks; "stop" is true when should_stop()
        (asked at the end of the iteration) is true on any rank, so every rank stops together."""
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
                with section("inference"):
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
            with section("update"):
                algorithm.compute_returns(obs)
        collect_time = time.perf_counter() - start
        with torch_threads(self.learn_threads), section("update"):
            losses = algorithm.update()
        iteration_time = time.perf_counter() - start
        transitions = env.num_envs * num_steps
        stop = should_stop is not None and should_stop()
        rates = [transitions / step_time, transitions / (step_time + inference_time), transitions / iteration_time]
        stats = _reduce_statistics(torch.stack([return_sum, length_sum, episodes]), rates, stop)
        stats.update(iteration_time_s=iteration_time, collect_time_s=collect_time, learn_time_s=iteration_time - collect_time)
        scalars = {f"Train/{k}": v for k, v in stats.items() if k.startswith(("mean_", "episodes"))}
        scalars.update({f"Perf/{k}": v for k, v in stats.items() if k.endswith(("fps", "_s"))})
        scalars.update({f"Loss/{k}": float(v) for k, v in losses.items()})
        scalars.update({k: float(v) / log_counts[k] for k, v in log_sums.items()})
        curve = {
            "iteration": float(self.iteration),
            "wall_time_s": self.wall_time_s + iteration_time,
            "env_steps": float((self.iteration + 1) * transitions * self.dist.world_size),
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


def _reduce_statistics(sums: torch.Tensor, rates: list[float], stop: bool) -> dict[str, float]:
    """Episode statistics and FPS of all ranks from this rank's (return sum, length sum, episodes)
    tensor, its (step, step+inference, total) FPS and its wish to stop: one all-reduce, and the one
    host synchronization of the iteration. "stop" is 1.0 when any rank asked to stop."""
    local = torch.cat([sums.double(), torch.tensor([*rates, float(stop)], dtype=torch.float64, device=sums.device)])
    return_total, length_total, episodes, step_fps, step_inference_fps, total_fps, stops = (
        distributed.all_reduce_sum(local).tolist()
    )
    return {
        "mean_return": return_total / episodes if episodes else float("nan"),
        "mean_episode_length": length_total / episodes if episodes else float("nan"),
        "episodes": episodes,
        "step_fps": step_fps,
        "step_inference_fps": step_inference_fps,
        "total_fps": total_fps,
        "stop": float(stops > 0),
    }


def _read_checkpoint(path: Path, world_size: int, map_location: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(state shared by all ranks, [part of rank 0, part of rank 1, ...]) of a checkpoint written by
    `world_size` processes (checkpoints of one process from before per-rank parts included)."""
    payload = load_checkpoint(path, map_location=map_location)
    saved = int(payload.get("world_size", 1))
    if saved != world_size:
        raise CanterError(f"{path} was written by {saved} process(es), this run has {world_size}: "
                          f"resume it with --nproc {saved}")
    parts = payload.get("ranks") or [{
        "env": payload["env"],
        "generator": payload["algorithm"]["generator"],
        "hidden_states": payload.get("hidden_states"),
        "num_envs": None,
    }]
    shared = {key: payload[key] for key in ("iteration", "wall_time_s", "algorithm", "history")}
    return shared, parts
