"""GA3C (Babaeizadeh et al. 2017, seed 002): one model fed by many agents through queues.

Agents (threads, each driving one env batch) put their observations on a prediction queue and wait;
predictor threads take what is queued (up to `max_prediction_batch` requests), run the policy once
on the concatenated batch and hand each agent its actions, log-probabilities under the acting policy
μ and the policy version that acted. After `num_steps_per_env` steps an agent puts its experience on
a training queue; trainer threads gather at least `min_training_batch` transitions, correct for the
policy lag (μ acted, π has since been updated) with V-trace (canter.rl.vtrace), and take one A2C step
on advantages normalized over the batch (Ga3cCfg.normalize_advantages), with the bound loss on a
Gaussian policy's means (AlgoCfg.bounds_loss_coef: 0.01 by default here).

Counts of predictors and trainers are balanced at run time as in the GA3C paper: every
`adjust_every_s` the balancer (ThreadBalancer) adds the trainings per second (TPS) of the last
period to its counts' mean, and alternates between the counts with the best mean and a trial of one
random ±1 step from them (the best measured again between trials, so noise cannot hold the climb).
With cfg.share_cores the threads of a kind split the cores between them (each sets its own torch
intra-op thread count). PPS (predictions/s: agent steps served), TPS (updates/s), queue lengths and
the policy lag (updates between acting and training) are measured per period.

Threads share the model: a trainer copies the parameters into its own replica under the lock,
computes its gradients there (so the other trainers' steps cannot invalidate its autograd graph),
then applies them to the shared model under the lock; predictors read the model under the same lock,
so they never see a half-applied step. torch releases the GIL in its kernels and the envs in their
C++ steps (MuJoCo's batch, ale-py), so the threads overlap.
"""

from __future__ import annotations

import copy
import dataclasses
import queue
import random
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import torch
from torch import nn

from canter.core.device import available_cores
from canter.core.rng import derive_seed
from canter.rl.algorithm import bf16_autocast
from canter.rl.config import AlgoCfg, Ga3cCfg
from canter.rl.gae import bootstrap_time_outs, normalize_advantages
from canter.rl.losses import bounds_loss
from canter.rl.modules import ActorCritic
from canter.rl.vtrace import importance_weighted_a2c_loss, vtrace

Observations = dict[str, torch.Tensor]


class ThreadBalancer:
    """GA3C's run-time search over (predictors, trainers): hill climbing on the measured TPS, made
    robust to noise.

    `step(tps)` takes the TPS measured with the current counts and returns the counts to run next.
    Every measurement joins its counts' running mean, and the best counts are those with the highest
    mean so far. From the best counts the next period tries one count moved by ±1 (chosen by `rng`,
    within [1, max]). A trial whose mean beats theirs becomes the best and the next trial starts from
    it; after any other trial the next period goes back to the best counts. So the best counts are
    measured again after every losing trial, and a lucky period cannot hold the climb for good. The
    plain climber before it (keep a move that beat the best single TPS seen, else undo it and move
    again at once) never measured its best counts again, and on a noisy CPU stayed wherever one period
    had been lucky. Counts are a dict {"predictors": p, "trainers": t}."""

    def __init__(self, counts: dict[str, int], bounds: dict[str, int], rng: random.Random):
        self.counts = dict(counts)
        self.bounds = dict(bounds)
        self.rng = rng
        self.best_counts = dict(counts)
        # per counts (sorted (name, count) pairs): [TPS sum, periods]
        self.measured: dict[tuple[tuple[str, int], ...], list[float]] = {}

    @staticmethod
    def _key(counts: dict[str, int]) -> tuple[tuple[str, int], ...]:
        return tuple(sorted(counts.items()))

    def mean_tps(self, counts: dict[str, int]) -> float:
        """The mean TPS measured with `counts` (-inf if never measured)."""
        total, periods = self.measured.get(self._key(counts), (0.0, 0.0))
        return total / periods if periods else float("-inf")

    @property
    def best_tps(self) -> float:
        return self.mean_tps(self.best_counts)

    def step(self, tps: float) -> dict[str, int]:
        entry = self.measured.setdefault(self._key(self.counts), [0.0, 0.0])
        entry[0] += tps
        entry[1] += 1
        self.best_counts = dict(max(self.measured, key=lambda key: self.measured[key][0] / self.measured[key][1]))
        if self.counts != self.best_counts:  # a trial ended (or the best fell behind): measure the best again
            self.counts = dict(self.best_counts)
            return dict(self.counts)
        moves = [(name, delta) for name in sorted(self.counts) for delta in (-1, 1)
                 if 1 <= self.counts[name] + delta <= self.bounds[name]]
        if moves:
            name, delta = self.rng.choice(moves)
            self.counts[name] += delta
        return dict(self.counts)

    def state_dict(self) -> dict[str, Any]:
        return {"counts": dict(self.counts), "best_counts": dict(self.best_counts),
                "measured": [[dict(key), total, periods] for key, (total, periods) in self.measured.items()]}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restores a state_dict(); a checkpoint of the plain climber (best_tps, no means) keeps its
        counts and best counts, and its best TPS as one measurement of them."""
        self.counts = dict(state["counts"])
        self.best_counts = dict(state["best_counts"])
        if "measured" in state:
            self.measured = {self._key(counts): [float(total), float(periods)]
                             for counts, total, periods in state["measured"]}
        elif float(state.get("best_tps", float("-inf"))) > float("-inf"):
            self.measured = {self._key(self.best_counts): [float(state["best_tps"]), 1.0]}


class _Request(NamedTuple):
    agent: int
    obs: Observations
    done: threading.Event
    reply: list[Any]


class _Experience(NamedTuple):
    obs: Observations  # (T, B, ...) per group
    actions: torch.Tensor  # (T, B, A)
    behaviour_log_prob: torch.Tensor  # (T, B)
    rewards: torch.Tensor  # (T, B)
    dones: torch.Tensor  # (T, B) bool
    last_obs: Observations  # (B, ...)
    versions: torch.Tensor  # (T, B) policy version that acted


@dataclass
class PeriodStats:
    """What one balancing period measured."""

    wall_time_s: float
    pps: float
    tps: float
    transitions_per_s: float
    prediction_queue: int
    training_queue: int
    policy_lag: float
    predictors: int
    trainers: int
    mean_return: float
    episodes: int
    mean_episode_length: float = float("nan")
    updates: int = 0  # policy version at the end of the period (updates since the run began)
    env_steps: int = 0  # agent steps since the run began
    losses: dict[str, float] = field(default_factory=dict)
    # threads busy in each activity, on average over the period (thread-seconds / seconds; THREAD_ACTIVITIES)
    activity: dict[str, float] = field(default_factory=dict)


# Where GA3C's threads spend their time (PeriodStats.activity): what each kind of thread does, with
# what it waits for. The compute rows against the cores (2 on the machines of BENCHMARKS.md) tell
# which kind of thread bounds a run; the waits tell who waits for whom.
THREAD_ACTIVITIES = {
    "agent_env": "agents stepping their env batch (physics or emulators) and keeping its statistics",
    "agent_wait_prediction": "agents waiting for a predictor's actions",
    "agent_stack": "agents stacking a finished rollout into one experience",
    "agent_wait_training_queue": "agents waiting for room in the (bounded) training queue",
    "predictor_wait_requests": "predictors waiting for observations to predict on",
    "predictor_wait_model": "predictors waiting for the model lock (a trainer applying its step)",
    "predictor_inference": "predictors running the policy on a batch and replying",
    "trainer_wait_batch": "trainers waiting for a training batch's worth of experience",
    "trainer_gradients": "trainers copying the model into their replica (under the lock) and computing V-trace A2C gradients",
    "trainer_apply": "trainers waiting for the model lock and taking the optimizer step",
}


class Ga3cRunner:
    """Trains `policy` on `envs` (one agent per env) with GA3C for `seconds` of wall time.

    envs: VecEnv batches on the CPU. seed: the action noise of each predictor and the balancer's
    moves. on_period: called with every PeriodStats (logging, checkpoints), from the thread that
    runs `learn`, while the workers go on.

    `state_dict()` holds what a resumed run needs: the policy (with its normalizers), Adam's
    moments, the policy version, the trained wall time, the balancer's counts and the period
    history; episodes in progress are not kept (a resumed run starts new ones). `interrupt.set()`
    (from a signal handler, say) ends `learn` within a fraction of a second."""

    def __init__(self, envs: Sequence[Any], policy: ActorCritic, algo: AlgoCfg, cfg: Ga3cCfg, *, seed: int = 0,
                 on_period: Callable[[PeriodStats], None] | None = None):
        self.envs, self.policy, self.algo, self.cfg = list(envs), policy, algo, cfg
        self.device = torch.device("cpu")
        self.optimizer = torch.optim.Adam(policy.parameters(), lr=algo.learning_rate)
        self.lock = threading.Lock()
        self.version = 0
        self.seed = seed
        self.bounds_coef = algo.bounds_coef(policy.discrete)  # 0.01 by default for a Gaussian policy
        self.on_period = on_period
        self.prediction_queue: queue.Queue[_Request] = queue.Queue()
        self.training_queue: queue.Queue[_Experience] = queue.Queue(maxsize=cfg.max_training_queue)
        self.stop = threading.Event()
        self.wanted = {"predictors": cfg.predictors, "trainers": cfg.trainers}
        self.balancer = ThreadBalancer(self.wanted, {"predictors": cfg.max_predictors, "trainers": cfg.max_trainers},
                                       random.Random(seed))
        self._counters = {"predictions": 0, "updates": 0, "transitions": 0, "episodes": 0}
        self._return_sum = 0.0
        self._length_sum = 0.0
        self._lag_sum = 0.0
        self._loss_sums: dict[str, float] = {}
        self._seconds = dict.fromkeys(THREAD_ACTIVITIES, 0.0)  # thread-seconds per activity
        self._doing: dict[int, tuple[str, float]] = {}  # per live thread: its activity and since when
        self._stat_lock = threading.Lock()
        self._threads: dict[str, list[threading.Thread]] = {"predictors": [], "trainers": []}
        self.history: list[PeriodStats] = []
        self.wall_time_s = 0.0  # trained before this learn() (resumed runs)
        self.env_steps = 0
        self.interrupt = threading.Event()
        self._started: float | None = None
        self._cores = available_cores()
        self.training_batch = cfg.training_batch(sum(env.num_envs for env in self.envs), algo.num_steps_per_env)

    # --- threads ------------------------------------------------------------------------------------
    def _enter(self, activity: str | None) -> None:
        """The calling thread turns to `activity` (THREAD_ACTIVITIES; None: it ends); the time since
        its last turn goes to the activity it leaves. learn() flushes the turns in progress at every
        period's end, so each thread's every second counts once, in the period it passed in."""
        now, thread = time.perf_counter(), threading.get_ident()
        with self._stat_lock:
            if thread in self._doing:
                previous, since = self._doing.pop(thread)
                self._seconds[previous] += now - since
            if activity is not None:
                self._doing[thread] = (activity, now)

    def _flush_activities(self, now: float) -> None:
        """(Under _stat_lock.) Counts the activities in progress up to `now`."""
        for thread, (activity, since) in self._doing.items():
            self._seconds[activity] += now - since
            self._doing[thread] = (activity, now)

    def _accounted(self, first_activity: str, loop: Callable[[int], None], index: int) -> None:
        """A thread's body: `loop(index)`, its time accounted from `first_activity` on (_enter)."""
        self._enter(first_activity)
        try:
            loop(index)
        finally:
            self._enter(None)

    def _share_cores(self, kind: str) -> None:
        """With cfg.share_cores, the calling thread's torch ops get the cores / (threads of its kind)
        (torch.set_num_threads is per thread under OpenMP); called before each batch of work, so the
        split follows the balancer's counts."""
        if self.cfg.share_cores:
            threads = max(1, self._cores // max(1, self.wanted[kind]))
            if torch.get_num_threads() != threads:
                torch.set_num_threads(threads)

    def _agent(self, index: int) -> None:
        env, steps = self.envs[index], self.algo.num_steps_per_env
        obs = env.reset()[0]
        while not self.stop.is_set():
            rollout: list[tuple[Observations, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, int]] = []
            for _ in range(steps):
                request = _Request(index, obs, threading.Event(), [])
                self._enter("agent_wait_prediction")
                self.prediction_queue.put(request)
                while not request.done.wait(0.1):
                    if self.stop.is_set():
                        return
                self._enter("agent_env")
                actions, log_prob, values, version = request.reply
                next_obs, reward, terminated, truncated, extras = env.step(actions)
                # time-outs are bootstrapped as in the synchronous runner: r += γ·V(s_t)
                reward = bootstrap_time_outs(reward, values, truncated, self.algo.gamma)
                rollout.append((obs, actions, log_prob, reward, terminated | truncated, version))
                ended = extras.get("episode_end", terminated | truncated)
                if bool(ended.any()):
                    with self._stat_lock:
                        self._counters["episodes"] += int(ended.sum())
                        self._return_sum += float(extras["episode_return"][ended].sum())
                        if "episode_length" in extras:
                            self._length_sum += float(extras["episode_length"][ended].float().sum())
                obs = next_obs
            self._enter("agent_stack")
            stacked = _Experience(
                obs={g: torch.stack([r[0][g] for r in rollout]) for g in obs},
                actions=torch.stack([r[1] for r in rollout]),
                behaviour_log_prob=torch.stack([r[2] for r in rollout]),
                rewards=torch.stack([r[3] for r in rollout]),
                dones=torch.stack([r[4] for r in rollout]),
                last_obs=obs,
                versions=torch.tensor([r[5] for r in rollout], dtype=torch.float32)[:, None].expand(steps, env.num_envs),
            )
            self._enter("agent_wait_training_queue")
            while True:  # a full (bounded) queue: wait for the trainers, but not past a stop
                try:
                    self.training_queue.put(stacked, timeout=0.1)
                    break
                except queue.Full:
                    if self.stop.is_set():
                        return
            self._enter("agent_env")

    def _predictor(self, index: int) -> None:
        # a resumed run (version > 0) draws new noise, not the first session's again
        generator = torch.Generator().manual_seed(derive_seed(self.seed, 2, index, self.version))
        while not self.stop.is_set() and index < self.wanted["predictors"]:
            try:
                first = self.prediction_queue.get(timeout=0.1)
            except queue.Empty:
                continue
            self._enter("predictor_inference")  # from gathering the batch to the last reply
            self._share_cores("predictors")
            requests = [first]
            while len(requests) < self.cfg.max_prediction_batch:
                try:
                    requests.append(self.prediction_queue.get_nowait())
                except queue.Empty:
                    break
            obs = {g: torch.cat([r.obs[g] for r in requests]) for g in first.obs}
            self._enter("predictor_wait_model")
            with self.lock:
                self._enter("predictor_inference")
                with torch.no_grad():
                    self.policy.update_normalization(obs)
                    step, values = self.policy.act_and_evaluate(obs, generator)
                version = self.version
            start = 0
            for request in requests:
                rows = slice(start, start + next(iter(request.obs.values())).shape[0])
                start = rows.stop
                request.reply.extend((step.actions[rows], step.log_prob[rows], values[rows], version))
                request.done.set()
            with self._stat_lock:
                self._counters["predictions"] += start
            self._enter("predictor_wait_requests")

    def _trainer(self, index: int) -> None:
        replica = copy.deepcopy(self.policy)
        while not self.stop.is_set() and index < self.wanted["trainers"]:
            batch: list[_Experience] = []
            transitions = 0
            while transitions < self.training_batch and not self.stop.is_set():
                try:
                    experience = self.training_queue.get(timeout=0.1)
                except queue.Empty:
                    continue
                batch.append(experience)
                transitions += experience.rewards.numel()
            if self.stop.is_set():
                return
            self._enter("trainer_gradients")
            self._share_cores("trainers")
            with self.lock:  # the current parameters (and normalizer statistics) into this trainer's replica
                replica.load_state_dict(self.policy.state_dict())
                version = self.version
            losses, lag = self._gradients(replica, batch, version)
            self._enter("trainer_apply")
            with self.lock:
                for shared, local in zip(self.policy.parameters(), replica.parameters(), strict=True):
                    shared.grad = local.grad
                self.optimizer.step()
                self.version += 1
            self._enter("trainer_wait_batch")
            with self._stat_lock:
                self._counters["updates"] += 1
                self._counters["transitions"] += transitions
                self._lag_sum += lag
                for name, value in losses.items():
                    self._loss_sums[name] = self._loss_sums.get(name, 0.0) + value

    def _gradients(self, replica: ActorCritic, batch: list[_Experience], version: int) -> tuple[dict[str, float], float]:
        """V-trace A2C gradients of `batch` in `replica`'s parameters; (losses, mean policy lag)."""
        algo = self.algo
        obs = {g: torch.cat([e.obs[g] for e in batch], dim=1) for g in batch[0].obs}
        last_obs = {g: torch.cat([e.last_obs[g] for e in batch]) for g in batch[0].last_obs}
        actions = torch.cat([e.actions for e in batch], dim=1)
        behaviour = torch.cat([e.behaviour_log_prob for e in batch], dim=1)
        rewards = torch.cat([e.rewards for e in batch], dim=1)
        dones = torch.cat([e.dones for e in batch], dim=1)
        versions = torch.cat([e.versions for e in batch], dim=1)
        steps, envs = rewards.shape
        flat = {g: v.reshape(steps * envs, *v.shape[2:]) for g, v in obs.items()}
        # the forward pass in bfloat16 where algo.autocast asks for it, as the synchronous update does
        with torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=bf16_autocast(algo.autocast, self.device)):
            mean, std, values = replica.forward_train(flat)
        mean, std, values = mean.float(), std.float(), values.float()
        log_prob = replica.log_prob(actions.reshape(steps * envs, -1), mean, std).view(steps, envs)
        entropy = replica.entropy(mean, std)
        values = values.view(steps, envs)
        with torch.no_grad():
            bootstrap = replica.evaluate(last_obs)
        targets, advantages, _ = vtrace(behaviour, log_prob.detach(), rewards, values.detach(), bootstrap, dones,
                                        algo.gamma, self.cfg.rho_bar, self.cfg.c_bar, algo.lam)
        if self.cfg.normalize_advantages:  # per training batch, as the synchronous learners per rollout
            advantages = normalize_advantages(advantages)
        loss, policy_loss, value_loss, mean_entropy = importance_weighted_a2c_loss(
            log_prob, values, entropy, targets, advantages, algo.value_loss_coef, algo.entropy_coef)
        losses = {"policy_loss": policy_loss, "value_loss": value_loss, "entropy": mean_entropy}
        if not replica.discrete:  # how far out the means are: E|μ|, the bound loss's concern
            losses["action_mean_abs"] = mean.detach().abs().mean()
        if self.bounds_coef:  # the Gaussian means kept within ±action_bound (AlgoCfg.bounds_loss_coef)
            losses["bounds_loss"] = bounds_loss(mean, algo.action_bound)
            loss = loss + self.bounds_coef * losses["bounds_loss"]
        replica.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(replica.parameters(), algo.max_grad_norm)
        lag = float(version - versions.mean())
        return {name: float(value.detach()) for name, value in losses.items()}, lag

    def _start(self, kind: str, count: int) -> None:
        loop, first = ((self._predictor, "predictor_wait_requests") if kind == "predictors"
                       else (self._trainer, "trainer_wait_batch"))
        threads = [t for t in self._threads[kind] if t.is_alive()]
        for index in range(len(threads), count):
            thread = threading.Thread(target=self._accounted, args=(first, loop, index), name=f"ga3c-{kind}-{index}",
                                      daemon=True)
            thread.start()
            threads.append(thread)
        self._threads[kind] = threads

    # --- checkpoints -------------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """The learned state and counters, consistent with each other (taken under the model lock)."""
        with self.lock:
            return {
                "policy": copy.deepcopy(self.policy.state_dict()),
                "optimizer": copy.deepcopy(self.optimizer.state_dict()),
                "version": self.version,
                "wall_time_s": self.wall_time_s + self._session_time(),
                "env_steps": self.env_steps + self._counters["predictions"],
                "counts": dict(self.wanted),
                "balancer": self.balancer.state_dict(),
                "history": [dataclasses.asdict(p) for p in self.history],
            }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restores a state_dict() (before `learn`)."""
        self.policy.load_state_dict(state["policy"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.version = int(state["version"])
        self.wall_time_s = float(state["wall_time_s"])
        self.env_steps = int(state["env_steps"])
        self.wanted.update(state["counts"])
        self.balancer.load_state_dict(state["balancer"])
        self.history = [PeriodStats(**p) for p in state["history"]]

    def _session_time(self) -> float:
        return 0.0 if self._started is None else time.perf_counter() - self._started

    # --- the loop --------------------------------------------------------------------------------------
    def learn(self, seconds: float, max_env_steps: int | None = None) -> list[PeriodStats]:
        """Train for `seconds` of wall time in this call, until the agents have taken
        `max_env_steps` steps since the run began, or until `interrupt` is set; returns the
        statistics of every balancing period (of the whole run, resumed sessions included)."""
        self.policy.train()
        self._started = start = time.perf_counter()

        def finished() -> bool:
            return (self.interrupt.is_set() or time.perf_counter() - start >= seconds
                    or (max_env_steps is not None and self.env_steps + self._counters["predictions"] >= max_env_steps))

        agents = [threading.Thread(target=self._accounted, args=("agent_env", self._agent, i), name=f"ga3c-agent-{i}",
                                   daemon=True)
                  for i in range(len(self.envs))]
        for thread in agents:
            thread.start()
        for kind, count in self.wanted.items():
            self._start(kind, count)
        try:
            while not finished():
                with self._stat_lock:  # every figure's start in one consistent snapshot
                    period_start = time.perf_counter()
                    self._flush_activities(period_start)
                    seconds_before = dict(self._seconds)
                    before = dict(self._counters)
                    returns_before, lengths_before, lag_before = self._return_sum, self._length_sum, self._lag_sum
                    losses_before = dict(self._loss_sums)
                period_end = period_start + max(0.0, min(self.cfg.adjust_every_s, seconds - (period_start - start)))
                while not finished() and time.perf_counter() < period_end:
                    self.interrupt.wait(min(0.05, max(0.0, period_end - time.perf_counter())))
                with self._stat_lock:
                    now = time.perf_counter()
                    elapsed = max(now - period_start, 1e-9)
                    self._flush_activities(now)
                    done = {k: self._counters[k] - before[k] for k in before}
                    episodes = done["episodes"]
                    returns = self._return_sum - returns_before
                    lengths = self._length_sum - lengths_before
                    lag = self._lag_sum - lag_before
                    losses = {k: (v - losses_before.get(k, 0.0)) / max(done["updates"], 1)
                              for k, v in self._loss_sums.items()}
                    predictions = self._counters["predictions"]
                    activity = {k: (v - seconds_before[k]) / elapsed for k, v in self._seconds.items()}
                stats = PeriodStats(
                    wall_time_s=self.wall_time_s + time.perf_counter() - start, pps=done["predictions"] / elapsed,
                    tps=done["updates"] / elapsed, transitions_per_s=done["transitions"] / elapsed,
                    prediction_queue=self.prediction_queue.qsize(), training_queue=self.training_queue.qsize(),
                    policy_lag=lag / max(done["updates"], 1), predictors=self.wanted["predictors"],
                    trainers=self.wanted["trainers"], mean_return=returns / episodes if episodes else float("nan"),
                    episodes=episodes, mean_episode_length=lengths / episodes if episodes else float("nan"),
                    updates=self.version, env_steps=self.env_steps + predictions, losses=losses, activity=activity)
                self.history.append(stats)
                if self.cfg.dynamic:
                    self.wanted.update(self.balancer.step(stats.tps))
                    for kind, count in self.wanted.items():
                        self._start(kind, count)
                if self.on_period is not None:
                    self.on_period(stats)
        finally:
            self.stop.set()
            for thread in agents + self._threads["predictors"] + self._threads["trainers"]:
                thread.join(timeout=5.0)
            self.wall_time_s += time.perf_counter() - start
            self.env_steps += self._counters["predictions"]
            self._counters = dict.fromkeys(self._counters, 0)
            self._started = None
            self.stop.clear()
        return self.history
