"""The rollout half shared by the on-policy algorithms (PPO, A2C): acting, recording, returns, the
gradient step, checkpoints. Subclasses implement `update()`.

The runner drives one iteration as:
    for _ in range(cfg.num_steps_per_env):
        actions = algorithm.act(obs)
        obs, rewards, terminated, truncated, extras = env.step(actions)
        algorithm.process_env_step(rewards, terminated, truncated, extras)
    algorithm.compute_returns(obs)
    losses = algorithm.update()
(acting and recording run under torch.no_grad; the runner needs no grad context of its own.)
"""

from __future__ import annotations

import copy
import functools
import platform
from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeVar

import torch
from torch import nn

from canter.core.errors import CanterError, ConfigError
from canter.core.mirror import Mirror
from canter.rl.config import AlgoCfg
from canter.rl.cuda_graph import GraphedFunction, check_cuda_graph
from canter.rl.distributed import all_reduce_gradients, all_reduce_mean, is_distributed
from canter.rl.gae import bootstrap_time_outs, compute_gae
from canter.rl.losses import adaptive_learning_rate
from canter.rl.modules import ActorCritic
from canter.rl.storage import MiniBatch, RolloutStorage

Observations = Mapping[str, torch.Tensor]
F = TypeVar("F", bound=Callable[..., Any])


@functools.cache
def cpu_has_fast_bf16() -> bool:
    """(Asked once per process: bf16_autocast runs for every minibatch.) Whether this CPU computes bfloat16 in
    hardware, so that oneDNN's bfloat16 convolutions and matmuls are fast: on x86, AVX512-BF16 or AMX. oneDNN's own
    check (`_is_mkldnn_bf16_supported`) also says yes on AVX-512 without either, where it emulates bfloat16 and is
    slow: on a 2-core Intel Xeon with AVX-512 but no AVX512-BF16, the Nature CNN's forward and backward pass over
    256 frames took 234-240 ms in bfloat16 against 65-75 ms in float32; on an AVX2-only CPU, Pong's update took 65 s per
    iteration against 5.2 s (BENCHMARKS.md §20). Elsewhere (aarch64) oneDNN's check is the hardware's."""
    try:
        if not torch.ops.mkldnn._is_mkldnn_bf16_supported():
            return False
        if platform.machine().lower() in ("x86_64", "amd64", "i386", "i686", "x86"):
            return bool(torch.cpu._is_avx512_bf16_supported() or torch.cpu._is_amx_tile_supported())
        return True
    except (AttributeError, RuntimeError):
        return False


def bf16_autocast(setting: str, device: torch.device) -> bool:
    """Whether the update's forward pass runs under bfloat16 autocast: always with "bf16", never
    with "off", and with "auto" on CUDA and on CPUs with native bfloat16 (cpu_has_fast_bf16)."""
    if setting == "auto":
        return device.type == "cuda" or (device.type == "cpu" and cpu_has_fast_bf16())
    return setting == "bf16"


def maybe_compile(function: F, cfg: AlgoCfg) -> F:
    """`function` wrapped in torch.compile when cfg.compile (compiled lazily, at its first call), with
    cfg.compile_backend and cfg.compile_mode; `function` itself otherwise."""
    if not cfg.compile:
        return function
    mode = None if cfg.compile_mode == "default" or cfg.compile_backend != "inductor" else cfg.compile_mode
    return torch.compile(function, backend=cfg.compile_backend, mode=mode)  # type: ignore[return-value]


# the acting copy's generator seed is the learner's initial seed plus this (RunnerCfg.overlap)
ACTOR_SEED_OFFSET = 0x0C011EC7
# the truncation of the decoupled objective's sampling weight π_prox/μ (decouple_from_behaviour)
DECOUPLED_WEIGHT_MAX = 2.0


class OnPolicyAlgorithm:
    """Owns the policy, its Adam optimizer, the rollout storage and the sampling generator.

    policy: an ActorCritic (or ActorCriticRecurrent); moved to `device`.
    observation_dtypes: the env's group dtypes where not float32 (uint8 images stay uint8 in storage).
    num_envs: envs per rollout. device: the env device; all rollout tensors stay there.
    generator: a torch.Generator on `device`, the only randomness of the algorithm (action noise and
        minibatch permutations).
    symmetry: the env's mirrors (ManagerBasedRLEnv.symmetry()), used by PPO when cfg.symmetry is on.

    The learning rate is a () tensor on `device` shared with the optimizer (fused Adam accepts a
    tensor lr), so the adaptive schedule changes it without a host sync.
    """

    algo_name: str = ""

    def __init__(
        self,
        policy: ActorCritic,
        cfg: AlgoCfg,
        *,
        num_envs: int,
        device: torch.device | str,
        generator: torch.Generator,
        observation_dtypes: Mapping[str, torch.dtype] | None = None,
        symmetry: tuple[Mapping[str, Mirror], Mirror] | None = None,
    ) -> None:
        if cfg.algo != self.algo_name:
            raise ConfigError(f"algo.algo: {type(self).__name__} needs {self.algo_name!r}, got {cfg.algo!r}")
        self.cfg = cfg
        self.device = torch.device(device)
        if generator.device.type != self.device.type:
            raise ValueError(f"generator is on {generator.device}, the algorithm on {self.device}")
        self.generator = generator
        # (observation group -> Mirror, action Mirror) when cfg.symmetry is on (canter.rl.symmetry)
        self.symmetry = symmetry
        self.policy = policy.to(self.device)
        # the bound loss's weight on the Gaussian means (0: off; AlgoCfg.bounds_loss_coef)
        self.bounds_coef = cfg.bounds_coef(policy.discrete)
        self.storage = RolloutStorage(
            num_envs=num_envs,
            num_transitions_per_env=cfg.num_steps_per_env,
            observation_shapes=policy.observation_shapes,
            num_actions=policy.num_actions,
            device=self.device,
            observation_dtypes=observation_dtypes,
        )
        self.learning_rate = torch.tensor(cfg.learning_rate, device=self.device)
        check_cuda_graph(cfg, self.device, world_size=2 if is_distributed() else 1)
        # capturable: Adam's step count and bias corrections stay on the device, as a graph needs
        self.optimizer = torch.optim.Adam(self.policy.parameters(), lr=self.learning_rate, fused=True,
                                          capturable=cfg.cuda_graph)
        # the learner's hot functions, compiled whole when cfg.compile, or replayed from CUDA graphs
        # when cfg.cuda_graph (one switch each; see AlgoCfg)
        self._learn = maybe_compile(self._learn_step, cfg)
        self._gae = maybe_compile(compute_gae, cfg)
        self._policy_step = maybe_compile(self._act_and_evaluate, cfg)
        self._act = self._normalize_act_and_evaluate
        self.graphs: list[GraphedFunction] = []
        # under overlap (set by the runner): PPO's decoupled objective, decouple_from_behaviour
        self.decoupled = False
        if cfg.cuda_graph:
            self._learn = self._graphed(self._learn_step, "the learner's minibatch step")
            self._gae = self._graphed(compute_gae, "GAE")
            if not policy.is_recurrent:  # a recurrent policy's memory is host-managed module state
                self._act = self._graphed(self._normalize_act_and_evaluate, "the policy's act",
                                          generators=(generator,), key=lambda: self.policy.training)

    def _graphed(self, function: Callable[..., Any], name: str, **kwargs: Any) -> GraphedFunction:
        graphed = GraphedFunction(function, name=f"algo.cuda_graph: {name}", device=self.device, **kwargs)
        self.graphs.append(graphed)
        return graphed

    # --- overlapped collection (RunnerCfg.overlap) ---------------------------------------------------

    def acting_copy(self) -> OnPolicyAlgorithm:
        """A second instance that collects the next rollout while this one learns: its own copy of the
        policy, its own rollout storage and its own generator (seeded from this one's initial seed
        + ACTOR_SEED_OFFSET); it shares the config and never learns (canter.rl.runner, overlap)."""
        actor = copy.copy(self)
        actor.policy = copy.deepcopy(self.policy)
        actor.storage = copy.deepcopy(self.storage)
        actor.generator = torch.Generator(self.device)
        actor.generator.manual_seed((self.generator.initial_seed() + ACTOR_SEED_OFFSET) % 2**63)
        actor._policy_step = maybe_compile(actor._act_and_evaluate, self.cfg)
        actor._act = actor._normalize_act_and_evaluate
        actor.graphs = []
        return actor

    @torch.no_grad()
    def hand_over(self, actor: OnPolicyAlgorithm) -> None:
        """The actor's collected rollout becomes this learner's (the storages swap) with the observation
        statistics the actor updated while collecting; this learner's parameters go to the actor."""
        self.storage, actor.storage = actor.storage, self.storage
        for mine, theirs in zip(self.policy.buffers(), actor.policy.buffers(), strict=True):
            mine.copy_(theirs)
        for mine, theirs in zip(self.policy.parameters(), actor.policy.parameters(), strict=True):
            theirs.copy_(mine)

    @torch.no_grad()
    def decouple_from_behaviour(self) -> None:
        """Makes this learner's own policy, before its update, the proximal policy of PPO's objective
        for the stored rollout (overlap: the rollout was collected by the policy one update behind).

        With the behaviour policy μ that collected the rollout and the proximal policy π_prox (this
        learner's, now), the decoupled objective of Hilton et al. (2021, "Batch size-invariance for
        policy optimization") is E_μ[w · min(r·A, clip(r, 1±ε)·A)] with r = π/π_prox and
        w = π_prox/μ (no gradient): the ratio's trust region sits around the policy being updated and
        w corrects the sampling. Since w > 0 it folds into the advantages, so the stored log-probs
        become π_prox's, the advantages w·A, and the stored means and stds (which serve only the
        adaptive schedule's KL) π_prox's. Measured from μ, the clip would pull the learner back
        towards the policy it has already left, and the KL would count the previous update too;
        both stalled learning (BENCHMARKS.md §14). w is truncated at DECOUPLED_WEIGHT_MAX."""
        storage = self.storage
        rows = storage.action_mean.shape[:2]
        observations = {group: buffer.flatten(0, 1) for group, buffer in storage.observations.items()}
        with torch.autocast(self.device.type, dtype=torch.bfloat16,
                            enabled=bf16_autocast(self.cfg.autocast, self.device)):
            mean, std = self.policy.action_distribution(observations)
        mean, std = mean.float().unflatten(0, rows), std.float().unflatten(0, rows)
        proximal_log_prob = self.policy.log_prob(storage.actions, mean, std)
        weight = torch.exp(proximal_log_prob - storage.log_probs).clamp(max=DECOUPLED_WEIGHT_MAX)
        storage.advantages.mul_(weight)
        storage.log_probs.copy_(proximal_log_prob)
        storage.action_mean.copy_(mean)
        storage.action_std.copy_(std)

    @torch.no_grad()
    def copy_policy_to(self, actor: OnPolicyAlgorithm) -> None:
        """The actor's policy made equal to this learner's: parameters and normalizer statistics."""
        for mine, theirs in zip(self.policy.state_dict().values(), actor.policy.state_dict().values(), strict=True):
            theirs.copy_(mine)

    # --- rollout ------------------------------------------------------------------------------------

    @torch.no_grad()
    def act(self, obs: Observations) -> torch.Tensor:
        """Samples actions (num_envs, num_actions) for obs and records the policy's half of the step."""
        if self.policy.is_recurrent and self.storage.step == 0:
            states = self.policy.hidden_states(self.storage.num_envs)
            assert states is not None
            self.storage.store_initial_hidden_states(*states)
        step, values = self._act(obs)
        self.storage.store_policy_step(
            observations=obs,
            actions=step.actions,
            log_probs=step.log_prob,
            action_mean=step.mean,
            action_std=step.std,
            values=values,
        )
        # a graph's outputs are overwritten by its next replay: the caller gets its own actions
        return step.actions.clone() if isinstance(self._act, GraphedFunction) else step.actions

    def _normalize_act_and_evaluate(self, obs: Observations) -> tuple[Any, torch.Tensor]:
        self.policy.update_normalization(obs)
        return self._policy_step(obs)

    def _act_and_evaluate(self, obs: Observations) -> tuple[Any, torch.Tensor]:
        return self.policy.act_and_evaluate(obs, self.generator)

    @torch.no_grad()
    def process_env_step(
        self,
        rewards: torch.Tensor,
        terminated: torch.Tensor,
        truncated: torch.Tensor,
        extras: Mapping[str, Any] | None = None,
    ) -> None:
        """Records the env's answer (each (num_envs,)) and resets the memory of envs that ended.

        Time-outs are bootstrapped here: r ← r + γ·V(s_t) where truncated, with V(s_t) the value of
        the observation at that step recorded by `act` (see canter.rl.gae). `extras` is not used by
        these algorithms; it is accepted so the runner can pass the env output through unchanged.
        """
        values = self.storage.values[self.storage.step]
        rewards = bootstrap_time_outs(rewards, values, truncated, self.cfg.gamma)
        self.storage.store_env_step(rewards=rewards, terminated=terminated, truncated=truncated)
        self.policy.reset(terminated | truncated)

    @torch.no_grad()
    def compute_returns(self, last_obs: Observations) -> None:
        """GAE returns and advantages of the full rollout, bootstrapped with V(last_obs)."""
        last_values = self.policy.evaluate(last_obs, advance_memory=False)
        self.storage.compute_returns(
            last_values,
            self.cfg.gamma,
            self.cfg.lam,
            normalize=not self.cfg.normalize_advantage_per_mini_batch,
            gae=self._gae,
        )

    def update(self) -> dict[str, torch.Tensor]:
        """Learns from the stored rollout, clears it, and returns mean losses as () tensors."""
        raise NotImplementedError

    def _learn_step(self, batch: MiniBatch) -> dict[str, torch.Tensor]:
        """One gradient step on a minibatch (forward, loss, backward, clip, optimizer step); returns its
        statistics as detached () tensors. `update` calls it as self._learn (compiled when cfg.compile)."""
        raise NotImplementedError

    # --- learning helpers ---------------------------------------------------------------------------

    def _mini_batches(self, num_mini_batches: int, num_epochs: int) -> Iterator[MiniBatch]:
        if self.policy.is_recurrent:
            return self.storage.recurrent_mini_batch_generator(num_mini_batches, num_epochs, self.generator)
        return self.storage.mini_batch_generator(num_mini_batches, num_epochs, self.generator)

    def _forward(self, batch: MiniBatch) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(mean (B, A), std (B, A), values (B,)) of the current policy on a minibatch, float32 (the
        forward pass itself in bfloat16 where cfg.autocast asks for it: bf16_autocast)."""
        # (no cast cache under CUDA graphs: cached casts would outlive the capture that made them)
        with torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=bf16_autocast(self.cfg.autocast, self.device),
                            cache_enabled=not self.cfg.cuda_graph):
            mean, std, values = self.policy.forward_train(
                batch.observations, batch.episode_starts, batch.actor_state, batch.critic_state
            )
        return mean.float(), std.float(), values.float()

    def _gradient_step(self, loss: torch.Tensor) -> torch.Tensor:
        """Backward, gradient all-reduce, global norm clip, Adam step. Returns the pre-clip norm ()."""
        return gradient_step(loss, self.policy, self.optimizer, self.cfg.max_grad_norm)

    @torch.no_grad()
    def _adapt_learning_rate(self, batch: MiniBatch, mean: torch.Tensor, std: torch.Tensor) -> torch.Tensor:
        """KL(π_old ‖ π) of a minibatch, averaged over processes; with the adaptive schedule it sets
        the learning rate (a device tensor, so no host sync). Returns the KL, a () tensor."""
        cfg = self.cfg
        kl = all_reduce_mean(self.policy.kl(batch.old_mean, batch.old_std, mean, std).mean())
        if cfg.schedule == "adaptive":
            self.learning_rate.copy_(
                adaptive_learning_rate(
                    self.learning_rate, kl, cfg.desired_kl, cfg.min_learning_rate, cfg.max_learning_rate
                )
            )
        return kl

    # --- modes and checkpoints -----------------------------------------------------------------------

    def train_mode(self) -> None:
        """Training mode: normalizers update their statistics."""
        self.policy.train()

    def eval_mode(self) -> None:
        """Evaluation mode: normalizer statistics are frozen."""
        self.policy.eval()

    def state_dict(self) -> dict[str, Any]:
        """algo name, policy (parameters and normalizer buffers), optimizer, learning rate, generator.

        Like torch's state_dicts, tensors are references to live state: save or deep-copy them.
        """
        return learner_state(self)

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restores what `state_dict` saved; the learning rate stays shared with the optimizer."""
        load_learner_state(self, state)


def gradient_step(loss: torch.Tensor, policy: nn.Module, optimizer: torch.optim.Optimizer,
                  max_grad_norm: float) -> torch.Tensor:
    """Backward, one flat gradient all-reduce over processes (no-op without torch.distributed),
    global norm clip, optimizer step. Returns the pre-clip gradient norm ()."""
    optimizer.zero_grad()
    loss.backward()
    all_reduce_gradients(policy.parameters())
    grad_norm = nn.utils.clip_grad_norm_(policy.parameters(), max_grad_norm)
    optimizer.step()
    return grad_norm.detach()


def learner_state(learner: Any) -> dict[str, Any]:
    """What every learner saves: algo name, policy, optimizer, learning rate, generator."""
    return {
        "algo": learner.algo_name,
        "policy": learner.policy.state_dict(),
        "optimizer": learner.optimizer.state_dict(),
        "learning_rate": learner.learning_rate.detach().clone(),
        "generator": learner.generator.get_state(),
    }


def load_learner_state(learner: Any, state: Mapping[str, Any]) -> None:
    """Restores `learner_state`; the learning rate () tensor stays shared with the optimizer."""
    if state["algo"] != learner.algo_name:
        raise CanterError(f"checkpoint holds a {state['algo']!r} algorithm, not {learner.algo_name!r}")
    learner.policy.load_state_dict(state["policy"])
    load_optimizer_state(learner, state["optimizer"], state["learning_rate"])
    learner.generator.set_state(state["generator"].cpu())  # a map_location may have moved it


def load_optimizer_state(learner: Any, optimizer: Mapping[str, Any], learning_rate: torch.Tensor | None) -> None:
    """Restores a saved optimizer state (Adam's moments and step counts) into `learner`, and its
    learning rate unless `learning_rate` is None (the learner's own rate is kept); the learning rate
    () tensor stays shared with the optimizer."""
    # capturable is this run's choice (algo.cuda_graph), not the saved run's
    capturable = [group.get("capturable", False) for group in learner.optimizer.param_groups]
    learner.optimizer.load_state_dict(optimizer)
    if learning_rate is not None:
        learner.learning_rate.copy_(learning_rate)
    for group, keep in zip(learner.optimizer.param_groups, capturable, strict=True):
        group["lr"] = learner.learning_rate
        group["capturable"] = keep
    for graphed in getattr(learner, "graphs", ()):  # captured graphs held the replaced state tensors
        graphed.invalidate()
