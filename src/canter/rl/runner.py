"""The on-policy runner: collect a rollout, learn from it, log, checkpoint; repeat.

It sees the env only through the VecEnv protocol. One host synchronization per iteration, for the
statistics that are logged. With the cpu physics backend, rollouts run torch on one thread so that
MuJoCo's thread pool has the cores (see canter.core.device.torch_threads); learning gets them back.

Under torch.distributed (canter.rl.distributed) every rank runs this loop on its own envs; the
statistics of an iteration are summed over ranks in one all-reduce (FPS figures add up, the mean
return covers every rank's episodes), the time budget is decided together, and checkpoints are
collective: every rank hands rank 0 its env state and generator, rank 0 alone writes the file (and
alone logs). Resuming needs the same world size; rank 0 reads the file and hands each rank its part.

Stopping early. `learn` handles SIGINT, SIGTERM and SIGHUP (in the main thread): the first signal
lets the iteration under way finish — a rollout is never cut, so the checkpoint holds exactly the
state an uninterrupted run has after that iteration and resuming from it stays bitwise identical —
then the checkpoint (and the logger's curves) are written and `learn` returns with `stop_signal`
set. Every rank stops at the same iteration: the signals received ride on the iteration's one
all-reduce. A second SIGINT raises KeyboardInterrupt at once; checkpoint writes are atomic, so the
last checkpoint stays whole.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from canter.core.device import torch_threads
from canter.core.errors import CanterError, ConfigError
from canter.core.files import copy_file
from canter.core.heap import retain_freed_memory
from canter.core.profiling import section
from canter.core.signals import STOP_SIGNALS, catch_stop_signals
from canter.core.validate import Validated, require_at_least, require_positive
from canter.envs.vec_env import VecEnv
from canter.rl import distributed
from canter.rl.algorithm import OnPolicyAlgorithm
from canter.rl.checkpoint import check_compatible, load_checkpoint, remove_stale_temps, save_atomic
from canter.rl.config import AlgoCfg, PolicyCfg
from canter.rl.dagger import Dagger, Expert
from canter.rl.factory import make_algorithm
from canter.rl.logger import CURVE_FILES, Logger, recent_means
from canter.rl.losses import linear_learning_rate

CHECKPOINT = "checkpoint.pt"
SNAPSHOTS = "snapshots"  # keep_snapshots: snapshots/it<K>.pt


@dataclass(kw_only=True)
class RunnerCfg(Validated):
    """The agent: policy, algorithm and the training loop's knobs.

    max_iterations: iterations of (rollout + update) to reach; max_time_s: stop earlier after this
        many seconds of wall time (None: no limit). save_interval: iterations between snapshots
        (checkpoint.pt is rewritten at every save and at the end). keep_snapshots: also keep each
        periodic save as snapshots/it<K>.pt (rsl_rl's model_<K>.pt), for evaluating a run along its
        training (scripts/dagger_curve.py) or going back to an earlier policy.
    rollout_threads: torch threads while collecting (0: one thread when the physics runs on the
        CPU's thread pool, else all cores). learn_threads: torch threads while learning (0: all).
    overlap: collect iteration k+1 while learning from iteration k's rollout, on a second thread
        (PPO with a feed-forward policy, one process, CPU device). The acting policy lags the learner
        by one update; PPO's ratio to the stored log-probabilities corrects it (tests/rl/test_overlap.py).
        The first iteration (and the first after loading a checkpoint saved without overlap) collects
        twice. A checkpoint holds the collected rollout that has not been learnt from yet, so resuming
        stays bitwise identical. Off by default: BENCHMARKS.md §14 measures it.
    """

    policy: PolicyCfg = field(default_factory=PolicyCfg)
    algo: AlgoCfg = field(default_factory=AlgoCfg)
    max_iterations: int = 300
    max_time_s: float | None = None
    save_interval: int = 50
    keep_snapshots: bool = False
    rollout_threads: int = 0
    learn_threads: int = 0
    overlap: bool = False

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
    runs on MuJoCo's CPU thread pool, so rollouts keep torch on one thread. task: the task's name,
    written into checkpoints and checked when loading one. expert: what algo "dagger" imitates
    (canter.rl.dagger; None for PPO/A2C). Under torch.distributed the rank is this
    process's, and threads default to this machine's cores shared by its ranks.

    Rank 0 removes the temporary files of checkpoint writes that a killed process left in run_dir.
    After `learn` returns, `stop_signal` is the signal that stopped it early, else None.
    """

    def __init__(self, env: VecEnv, cfg: RunnerCfg, run_dir: Path, *, seed: int, cpu_physics: bool,
                 task: str | None = None, expert: Expert | None = None):
        self.env = env
        self.task = task
        self.cfg = cfg
        self.run_dir = Path(run_dir)
        self.dist = distributed.info()
        self.rank = self.dist.rank
        self.algorithm: OnPolicyAlgorithm | Dagger = make_algorithm(env, cfg.policy, cfg.algo, seed=seed,
                                                                     rank=self.rank, expert=expert)
        distributed.broadcast_module(self.algorithm.policy)
        retain_freed_memory(learns_from_images=bool(cfg.policy.image_obs_groups))  # CNN updates: canter.core.heap
        self.iteration = 0
        self.wall_time_s = 0.0
        self.history: list[dict[str, float]] = []
        self.nonfinite_resets_total = 0.0  # envs reset for a blown-up physics state, all ranks, whole run
        self.stop_signal: signal.Signals | None = None
        self._signal: signal.Signals | None = None  # received by this process during learn()
        if self.rank == 0 and self.run_dir.is_dir():
            remove_stale_temps(self.run_dir, (CHECKPOINT, *CURVE_FILES))
        cores = distributed.cores_per_process()
        self.rollout_threads = cfg.rollout_threads or (1 if cpu_physics else cores)
        self.learn_threads = cfg.learn_threads or cores
        self.env_steps = 0.0  # env steps collected, all ranks, whole run
        # overlap: the acting copy, whether the learner holds a rollout it has not learnt from, the thread
        self._actor: OnPolicyAlgorithm | None = self._make_actor() if cfg.overlap else None
        self._pending = False
        self._learn_thread: ThreadPoolExecutor | None = None

    def _make_actor(self) -> OnPolicyAlgorithm:
        """The acting copy of an overlapped run (cfg.overlap); ConfigError where overlap cannot run."""
        algorithm = self.algorithm
        why = None
        if not isinstance(algorithm, OnPolicyAlgorithm) or algorithm.algo_name != "ppo":
            why = f"it needs PPO, whose ratio corrects the one-update lag (algo is {self.cfg.algo.algo!r})"
        elif algorithm.policy.is_recurrent:
            why = "it needs a feed-forward policy (a recurrent memory belongs to one acting policy)"
        elif algorithm.device.type != "cpu":
            why = (f"it runs on the CPU only ({algorithm.device} queues collection and learning on one "
                   "device; the learner's CUDA graphs are the lever there)")
        elif self.dist.world_size > 1:
            why = "it runs in one process (the learner's gradient all-reduce would race the collection's)"
        elif self.cfg.algo.cuda_graph:
            why = "it does not combine with algo.cuda_graph"
        if why is not None:
            raise ConfigError(f"agent.overlap: {why}")
        algorithm.decoupled = True  # PPO's trust region around the learner, not the lagged actor
        return algorithm.acting_copy()

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
            # overlap: the acting copy's generator and the collected rollout not learnt from yet
            "actor_generator": self._actor.generator.get_state() if self._actor is not None else None,
            "pending_rollout": self.algorithm.storage.state_dict() if self._pending else None,
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
            "meta": self._meta(),
            "iteration": self.iteration,
            "wall_time_s": self.wall_time_s,
            "algorithm": self.algorithm.state_dict(),
            "hidden_states": parts[0]["hidden_states"],
            "env": parts[0]["env"],
            "history": self.history,
            "nonfinite_resets_total": self.nonfinite_resets_total,
            "env_steps": self.env_steps,
            "world_size": len(parts),
            "ranks": parts,
        }
        return save_atomic(payload, path or self.run_dir / CHECKPOINT)

    def _meta(self) -> dict[str, Any]:
        """What a checkpoint is for: the task, its observation groups and actions."""
        return {"task": self.task, "observation_shapes": dict(self.env.observation_shapes),
                "num_actions": self.env.num_actions}

    def load_policy(self, path: Path, payload: dict[str, Any] | None = None) -> None:
        """Loads only the policy (parameters and normalizers) of a checkpoint, for play/eval; one
        process. A checkpoint of another task or shape is a CanterError saying which. payload: the
        checkpoint at `path` if the caller has read it already."""
        if payload is None:
            payload = load_checkpoint(path, map_location=self.env.device)
        check_compatible(payload, path, self._meta(), self.algorithm.policy.state_dict())
        self.algorithm.policy.load_state_dict(payload["algorithm"]["policy"])

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
                check_compatible(shared, path, self._meta(), self.algorithm.policy.state_dict())
            except CanterError as err:
                error = str(err)
        error = distributed.broadcast_object(error)
        if error is not None:
            raise CanterError(error)
        shared = distributed.broadcast_object(shared)
        part = distributed.scatter_object(parts)
        if int(part["num_envs"]) != self.env.num_envs:
            raise CanterError(f"{path} holds {part['num_envs']} envs per process, this run has {self.env.num_envs}")
        self.algorithm.load_state_dict(shared["algorithm"])
        self.algorithm.generator.set_state(part["generator"].cpu())
        if part.get("hidden_states") is not None:
            self.algorithm.policy.set_hidden_states(*part["hidden_states"])
        self.env.load_state_dict(part["env"])
        self.iteration = int(shared["iteration"])
        self.wall_time_s = float(shared["wall_time_s"])
        self.history = list(shared["history"])
        self.nonfinite_resets_total = float(shared["nonfinite_resets_total"])
        rollout = self.env.num_envs * self.cfg.algo.num_steps_per_env * world_size
        self.env_steps = float(shared.get("env_steps", self.iteration * rollout))
        self._pending = False
        if self._actor is not None:
            # a rollout collected but not learnt from when the run was saved is learnt from next; a
            # checkpoint without one (saved without overlap) starts with a collection of its own
            if part.get("actor_generator") is not None:
                self._actor.generator.set_state(part["actor_generator"].cpu())
            if part.get("pending_rollout") is not None:
                self.algorithm.storage.load_state_dict(part["pending_rollout"])
                self._pending = True
            self.algorithm.copy_policy_to(self._actor)

    # --- training -----------------------------------------------------------------------------
    def annealed_learning_rate(self, iterations: int, wall_time_s: float) -> float:
        """The linear schedule's rate after `iterations` iterations and `wall_time_s` trained seconds:
        the budget spent is the larger of iterations/max_iterations and wall_time_s/max_time_s."""
        cfg = self.cfg
        spent = iterations / cfg.max_iterations
        if cfg.max_time_s is not None:
            spent = max(spent, wall_time_s / cfg.max_time_s)
        return linear_learning_rate(cfg.algo.learning_rate, cfg.algo.min_learning_rate, spent)

    def learn(self, logger: Logger | None = None) -> dict[str, float]:
        """Train until max_iterations, max_time_s or a stop signal (see the module docstring);
        returns the last iteration's statistics. The checkpoint is written every save_interval
        iterations and when stopping; the logger's curves with it."""
        env, algorithm = self.env, self.algorithm
        self.stop_signal = self._signal = None
        last: dict[str, float] = {}
        with self.stop_signals():
            obs = env.get_observations() if self.iteration > 0 else env.reset()[0]
            algorithm.train_mode()
            start_wall = self.wall_time_s
            session_start = time.perf_counter()
            max_time_s = self.cfg.max_time_s

            def should_stop() -> bool:  # the time is up, or the output's reader went away (SIGPIPE, below)
                return (max_time_s is not None and time.perf_counter() - session_start >= max_time_s) or (
                    logger is not None and logger.output_closed)

            saved = False
            while self.iteration < self.cfg.max_iterations:
                obs, last = self.run_iteration(obs, logger, should_stop=should_stop)
                self.wall_time_s = start_wall + time.perf_counter() - session_start
                self.iteration += 1
                saved = self.iteration % self.cfg.save_interval == 0
                if saved:
                    self._save(logger, snapshot=self.cfg.keep_snapshots)
                if last["stop_signal"]:
                    self.stop_signal = signal.Signals(int(last["stop_signal"]))
                if last["stop"]:
                    break
            if not saved:
                self._save(logger)
            if self.stop_signal is None and logger is not None and logger.output_closed:
                self.stop_signal = signal.SIGPIPE
        return last

    def _save(self, logger: Logger | None, snapshot: bool = False) -> None:
        with section("logging"):
            path = self.save()
            if snapshot and path is not None:  # a hard link where the file system allows: no copy
                keep = self.run_dir / SNAPSHOTS / f"it{self.iteration}.pt"
                try:
                    keep.parent.mkdir(exist_ok=True)
                    keep.unlink(missing_ok=True)
                    os.link(path, keep)
                except OSError:
                    copy_file(path, keep)  # whole or not at all; a full disk is a WriteError naming it
            if logger is not None:
                logger.checkpoint(self.history)

    @property
    def received_signal(self) -> signal.Signals | None:
        """The stop signal received within `stop_signals()` (None: none yet)."""
        return self._signal

    @contextmanager
    def stop_signals(self) -> Iterator[None]:
        """Within: the first stop signal asks for a stop at the end of the iteration under way
        (`received_signal`); a second SIGINT raises KeyboardInterrupt (canter.core.signals)."""

        def on_stop(signum: signal.Signals) -> None:
            self._signal = signum

        try:
            with catch_stop_signals(on_stop):
                yield
        finally:
            self._signal = None  # stop_signal keeps what stopped this learn()

    def run_iteration(
        self, obs: dict[str, torch.Tensor], logger: Logger | None = None, should_stop: Callable[[], bool] | None = None
    ) -> tuple[dict[str, torch.Tensor], dict[str, float]]:
        """One rollout + update from `obs` (the env's current observations); returns the next
        observations and the iteration's statistics, summed over ranks: mean_return,
        mean_episode_length, episodes, the FPS figures, times, losses, nonfinite_resets (envs reset
        for a blown-up physics state this iteration) and nonfinite_resets_total (the whole run's).
        "stop" is 1.0 when should_stop() (asked at the end of the iteration) is true or a stop signal
        arrived on any rank, so every rank stops together; "stop_signal" is that signal's number (0:
        none). Does not advance `iteration` (learn does)."""
        if self.cfg.algo.algo == "ga3c":
            raise CanterError("algo ga3c trains on its own asynchronous runner: canter train TASK --algo ga3c "
                              "(or canter bench ga3c TASK)")
        env, algorithm = self.env, self.algorithm
        num_steps = algorithm.cfg.num_steps_per_env
        sums = _RolloutSums(env.device)
        start = time.perf_counter()
        if self._actor is None:
            obs = self._collect(obs, algorithm, sums)
            collect_time = time.perf_counter() - start
            with torch_threads(self.learn_threads), section("update"):
                losses = algorithm.update()
        else:
            obs, collect_time, losses = self._overlapped(obs, self._actor, sums)
        phase_times = sums.clock.totals()  # on CUDA: one synchronization, after the rollout
        inference_time, step_time = phase_times["inference"], phase_times["step"]
        iteration_time = time.perf_counter() - start
        transitions = env.num_envs * num_steps * sums.rollouts
        stop = should_stop is not None and should_stop()
        rates = [transitions / step_time, transitions / (step_time + inference_time), transitions / iteration_time]
        wall_time = self.wall_time_s + iteration_time
        stats = _reduce_statistics(sums.stacked(), rates, stop,
                                   self._signal, wall_time / self.dist.world_size)
        if algorithm.cfg.schedule == "linear":
            # the next update's rate, from the budget spent (ranks agree: the wall time is their mean)
            algorithm.learning_rate.fill_(self.annealed_learning_rate(self.iteration + 1, stats["wall_time_s"]))
        self.nonfinite_resets_total += stats["nonfinite_resets"]
        self.env_steps += transitions * self.dist.world_size
        stats["nonfinite_resets_total"] = self.nonfinite_resets_total
        stats.update(iteration_time_s=iteration_time, collect_time_s=collect_time, learn_time_s=iteration_time - collect_time)
        scalars = {f"Train/{k}": v for k, v in stats.items() if k.startswith(("mean_", "episodes", "nonfinite_"))}
        scalars.update({f"Perf/{k}": v for k, v in stats.items() if k.endswith(("fps", "_s"))})
        # the losses and the log sums: one device-to-host copy for the iteration's statistics
        log_sums, log_counts = sums.logs.totals()
        counts = {f"Count/{k}": v for k, v in log_counts.items()}
        host = _to_host({**{f"Loss/{k}": v for k, v in losses.items()}, **log_sums, **counts})
        losses = {k: host[f"Loss/{k}"] for k in losses}
        scalars.update({f"Loss/{k}": v for k, v in losses.items()})
        scalars.update({k: host[k] / host[f"Count/{k}"] for k in log_sums if host[f"Count/{k}"] > 0})
        curve = {
            "iteration": float(self.iteration),
            "wall_time_s": wall_time,
            "env_steps": self.env_steps,
            "mean_return": stats["mean_return"],
            "mean_episode_length": stats["mean_episode_length"],
            "step_fps": stats["step_fps"],
            "step_inference_fps": stats["step_inference_fps"],
            "total_fps": stats["total_fps"],
            "nonfinite_resets": stats["nonfinite_resets"],
            "learning_rate": losses.get("learning_rate", float("nan")),  # the update's (the adaptive: after it)
            "episodes": stats["episodes"],
        }
        if self.rank == 0:
            self.history.append(curve)
        # the latest >= RECENT_EPISODES episodes (whole iterations; the other ranks log nothing: theirs is the iteration's)
        stats["recent_return"], stats["recent_episode_length"] = recent_means(self.history if self.rank == 0 else [curve])
        curve.update(recent_return=stats["recent_return"], recent_episode_length=stats["recent_episode_length"])
        scalars.update({"Train/recent_return": stats["recent_return"], "Train/recent_episode_length": stats["recent_episode_length"]})
        if logger is not None:
            with section("logging"):
                logger.log_iteration(self.iteration, scalars, curve)
                take = getattr(self.env, "take_sim_warnings", None)  # this process's; the counts are all ranks'
                logger.note_instability(self.iteration, stats["nonfinite_resets"], stats["episodes"],
                                        take() if take else {})
        return obs, {**stats, **losses}

    def _collect(self, obs: dict[str, torch.Tensor], algorithm: OnPolicyAlgorithm | Dagger,
                 sums: _RolloutSums) -> dict[str, torch.Tensor]:
        """One rollout of num_steps_per_env steps into `algorithm`'s storage, with its returns (GAE);
        the episode statistics go to `sums`. Returns the next observations."""
        env, clock = self.env, sums.clock
        with torch_threads(self.rollout_threads), torch.no_grad():
            for _ in range(algorithm.cfg.num_steps_per_env):
                clock.start()
                with section("inference"):
                    actions = algorithm.act(obs)
                clock.lap("inference")
                obs, rewards, terminated, truncated, extras = env.step(actions)
                clock.lap("step")
                with section("storage"):
                    algorithm.process_env_step(rewards, terminated, truncated, extras)
                sums.add(terminated, truncated, extras)
            with section("gae"):
                algorithm.compute_returns(obs)
        sums.rollouts += 1
        return obs

    def _overlapped(self, obs: dict[str, torch.Tensor], actor: OnPolicyAlgorithm,
                    sums: _RolloutSums) -> tuple[dict[str, torch.Tensor], float, dict[str, torch.Tensor]]:
        """An overlapped iteration (cfg.overlap): the learner learns from the rollout it holds on a
        second thread while `actor`, one update behind, collects the next; then the new rollout goes
        to the learner and the learner's parameters to the actor. Returns the next observations, the
        collection's seconds and the update's losses. The update's "update" phase is the wait for it
        after the collection: the part the collection did not hide."""
        learner = self.algorithm
        start = time.perf_counter()
        if not self._pending:  # nothing to learn from yet: collect with the learner's policy first
            learner.copy_policy_to(actor)
            obs = self._collect(obs, actor, sums)
            learner.hand_over(actor)
            self._pending = True
        if self._learn_thread is None:
            self._learn_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="canter-learner")
        learning = self._learn_thread.submit(self._update_on_thread)
        try:
            obs = self._collect(obs, actor, sums)
        finally:
            collect_time = time.perf_counter() - start
            with section("update"):
                losses = learning.result()
        learner.hand_over(actor)
        return obs, collect_time, losses

    def _update_on_thread(self) -> dict[str, torch.Tensor]:
        with torch_threads(self.learn_threads):  # this thread's own OpenMP team
            return self.algorithm.update()


class _RolloutSums:
    """An iteration's episode statistics and phase clock, summed over the rollouts it collects."""

    def __init__(self, device: torch.device):
        zero = torch.zeros((), device=device)
        self.return_sum, self.length_sum, self.episodes, self.nonfinite = (zero.clone() for _ in range(4))
        self.logs = _LogSums(device)
        self.clock = PhaseClock(device, ("inference", "step"))
        self.rollouts = 0

    def add(self, terminated: torch.Tensor, truncated: torch.Tensor, extras: dict[str, Any]) -> None:
        # episodes for the statistics: an env may end them apart from the learner's terminals
        # (Atari's episodic life: a lost life is terminal, the game is the episode)
        done = extras.get("episode_end", terminated | truncated).float()
        self.return_sum += torch.sum(extras["episode_return"] * done)
        self.length_sum += torch.sum(extras["episode_length"] * done)
        self.episodes += done.sum()
        if "nonfinite_resets" in extras:
            self.nonfinite += extras["nonfinite_resets"]
        self.logs.add(extras.get("log", {}))

    def stacked(self) -> torch.Tensor:
        return torch.stack([self.return_sum, self.length_sum, self.episodes, self.nonfinite])

class _LogSums:
    """The env's per-step log scalars summed over an iteration, each with the count of steps where it
    was a number (NaN: a per-reset mean of a step in which no env reset, canter.core.selection.mean).
    A step's values go in as one stacked tensor, a handful of kernels per step whatever their number
    (on a GPU each kernel costs its launch)."""

    def __init__(self, device: torch.device):
        self.device = device
        self.groups: dict[tuple[str, ...], list[torch.Tensor]] = {}  # the step's keys -> [sums, counts]

    def add(self, log: dict[str, Any]) -> None:
        if not log:
            return
        keys = tuple(log)
        values = torch.stack([torch.as_tensor(v, device=self.device, dtype=torch.float32).reshape(()) for v in log.values()])
        valid = ~torch.isnan(values)
        values = torch.where(valid, values, 0.0)
        group = self.groups.get(keys)
        if group is None:
            self.groups[keys] = [values, valid.to(torch.float32)]
        else:
            group[0].add_(values)
            group[1].add_(valid)

    def totals(self) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]]:
        """(sums, counts) by key, () tensors."""
        sums: dict[str, torch.Tensor] = {}
        counts: dict[str, torch.Tensor] = {}
        for keys, (group_sums, group_counts) in self.groups.items():
            for i, key in enumerate(keys):
                sums[key] = sums[key] + group_sums[i] if key in sums else group_sums[i]
                counts[key] = counts[key] + group_counts[i] if key in counts else group_counts[i]
        return sums, counts


def _to_host(values: dict[str, Any]) -> dict[str, float]:
    """Python floats of a dict of scalars (tensors on any device, or numbers), with one copy per
    device instead of one synchronization per value."""
    out = {k: float(v) for k, v in values.items() if not isinstance(v, torch.Tensor)}
    tensors = {k: v for k, v in values.items() if isinstance(v, torch.Tensor)}
    by_device: dict[torch.device, list[str]] = {}
    for key, value in tensors.items():
        by_device.setdefault(value.device, []).append(key)
    for keys in by_device.values():
        numbers = torch.stack([tensors[k].detach().double().reshape(()) for k in keys]).tolist()
        out.update(zip(keys, numbers, strict=True))
    return {k: out[k] for k in values}


class PhaseClock:
    """Time spent in named phases of a loop, without stalling an asynchronous device.

    On the CPU a lap is host wall time since the previous mark. On CUDA each mark records an event on
    the current stream, so the rollout never waits for the device; totals() synchronizes once (on the
    last event) and sums the device time between marks, which includes the gaps where the device
    waited for the host to queue work, so the phases still add up to the loop's time.
    """

    def __init__(self, device: torch.device, phases: tuple[str, ...]):
        self.cuda = device.type == "cuda"
        self._host = dict.fromkeys(phases, 0.0)
        self._events: list[tuple[str | None, Any]] = []
        self._last = 0.0

    def _mark(self, phase: str | None) -> None:
        if self.cuda:
            event = torch.cuda.Event(enable_timing=True)
            event.record()
            self._events.append((phase, event))
        else:
            now = time.perf_counter()
            if phase is not None:
                self._host[phase] += now - self._last
            self._last = now

    def start(self) -> None:
        self._mark(None)

    def lap(self, phase: str) -> None:
        self._mark(phase)

    def totals(self) -> dict[str, float]:
        """Seconds per phase since construction (resets the clock)."""
        totals = dict.fromkeys(self._host, 0.0)
        if self.cuda and self._events:
            self._events[-1][1].synchronize()
            for (_, before), (phase, after) in zip(self._events, self._events[1:], strict=False):
                if phase is not None:
                    totals[phase] += before.elapsed_time(after) / 1000.0
            self._events.clear()
        else:
            totals, self._host = self._host, dict.fromkeys(self._host, 0.0)
        return totals


def _reduce_statistics(
    sums: torch.Tensor, rates: list[float], stop: bool, received: signal.Signals | None, wall_time_share: float = 0.0
) -> dict[str, float]:
    """Episode statistics and FPS of all ranks from this rank's (return sum, length sum, episodes,
    non-finite resets) tensor, its (step, step+inference, total) FPS, its wish to stop, the stop
    signal it received and its share of the wall time (its trained seconds / world size): one
    all-reduce, and the one host synchronization of the iteration. "stop" is 1.0 when any rank asked
    to stop or received a signal; "stop_signal" is the first of STOP_SIGNALS any rank received (0:
    none); "wall_time_s" is the ranks' mean, the same number on every rank."""
    flags = [float(stop or received is not None), *(float(received == s) for s in STOP_SIGNALS)]
    local = torch.cat([sums.double(),
                       torch.tensor([*rates, wall_time_share, *flags], dtype=torch.float64, device=sums.device)])
    (return_total, length_total, episodes, nonfinite, step_fps, step_inference_fps, total_fps, wall_time,
     stops, *signals) = distributed.all_reduce_sum(local).tolist()
    stop_signal = next((int(s) for s, count in zip(STOP_SIGNALS, signals, strict=True) if count > 0), 0)
    return {
        "mean_return": return_total / episodes if episodes else float("nan"),
        "mean_episode_length": length_total / episodes if episodes else float("nan"),
        "episodes": episodes,
        "step_fps": step_fps,
        "step_inference_fps": step_inference_fps,
        "total_fps": total_fps,
        "nonfinite_resets": nonfinite,
        "stop": float(stops > 0),
        "stop_signal": float(stop_signal),
        "wall_time_s": wall_time,
    }


def _read_checkpoint(path: Path, world_size: int, map_location: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(state shared by all ranks, [part of rank 0, part of rank 1, ...]) of a checkpoint written by
    `world_size` processes."""
    payload = load_checkpoint(path, map_location=map_location)
    keys = ("meta", "iteration", "wall_time_s", "algorithm", "history", "nonfinite_resets_total")
    missing = [key for key in (*keys, "world_size", "ranks") if key not in payload]
    if missing:
        raise CanterError(f"{path} was written by an older Canter (it lacks {', '.join(missing)}): train anew")
    saved = int(payload["world_size"])
    if saved != world_size:
        raise CanterError(f"{path} was written by {saved} process(es), this run has {world_size}: "
                          f"resume it with --nproc {saved}")
    shared = {key: payload[key] for key in keys}
    if "env_steps" in payload:  # (older checkpoints: iteration x rollout)
        shared["env_steps"] = payload["env_steps"]
    return shared, payload["ranks"]
