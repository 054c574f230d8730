"""DAgger (Ross, Gordon & Bagnell 2011) and teacher-student distillation, as an algorithm the
OnPolicyRunner drives like PPO (act → env.step → process_env_step → compute_returns → update).

Iteration i (0-based) collects num_steps_per_env steps with the mixture policy
    π_i = β_i·π* + (1 − β_i)·π̂_i
drawn per env and step (β_i from cfg.dagger.beta(i)); the expert π* labels every visited state,
whoever acted; the labelled states join an aggregated dataset (FIFO, the newest dataset_size
transitions); the student π̂ then regresses the expert's actions over the whole dataset,
    min_θ  E_(s, a*) ∈ D ‖μ_θ(s) − a*‖²,
with num_learning_epochs passes of num_mini_batches minibatches. β_i = 0 for every i is rsl_rl's
teacher-student distillation: the student drives and a teacher labels its own rollouts.

An expert is a function obs -> actions (num_envs, num_actions) on the env's device: a scripted
controller with full state access (the task's, reading the env it closes over: `EnvExpert`) or a
trained policy reading privileged observation groups (`policy_expert`). The student reads only its
own groups. An expert with state (a scripted controller's per-env phase) is saved with the algorithm.

An auxiliary task (cfg.dagger.auxiliary_group) adds a second regression to the same minibatches: a
small head on the student's actor features predicts an observation group the student does not read
(normalized by its running statistics), min_θ,ψ ‖μ_θ(s) − a*‖² + c·‖h_ψ(φ_θ(s)) − ẑ‖², so that the
shared encoder φ_θ learns to represent what the expert knows (the target object's position). The head
is the learner's: it is checkpointed with the algorithm, never exported with the policy.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

import torch
from torch import nn

from canter.core.errors import CanterError, ConfigError
from canter.rl.algorithm import bf16_autocast, gradient_step, learner_state, load_learner_state
from canter.rl.config import AlgoCfg
from canter.rl.distributed import update_normalizers
from canter.rl.encoders import channels_last_on_cpu
from canter.rl.modules import ActorCritic, build_mlp
from canter.rl.normalizer import EmpiricalNormalizer

Observations = Mapping[str, torch.Tensor]
Expert = Callable[[Observations], torch.Tensor]


class AggregatedDataset:
    """A ring buffer of (observation groups, expert action) pairs on `device`: the DAgger dataset.

    observation_shapes: group -> per-sample shape; observation_dtypes: group -> dtype (default float32;
    images arrive as uint8 and are kept as uint8). Rows of one `add` call stay aligned: row k of every
    group and row k of the labels come from the same env at the same step.
    """

    def __init__(
        self,
        capacity: int,
        observation_shapes: Mapping[str, tuple[int, ...]],
        num_actions: int,
        device: torch.device | str,
        observation_dtypes: Mapping[str, torch.dtype] | None = None,
    ) -> None:
        self.capacity = int(capacity)
        self.device = torch.device(device)
        dtypes = dict(observation_dtypes or {})
        self.observations = {group: self._buffer(shape, dtypes.get(group, torch.float32))
                             for group, shape in observation_shapes.items()}
        self.labels = torch.zeros((self.capacity, num_actions), device=self.device)
        self.position = 0  # next row to write
        self.size = 0  # rows filled

    def _buffer(self, shape: tuple[int, ...], dtype: torch.dtype) -> torch.Tensor:
        """(capacity, *shape) zeros; images the encoder learns from channels-last on the CPU are kept
        channels-last, so minibatches gathered from them need no reorder (~10 ms per minibatch of
        780 RGB-D 64x64 frames on the 2-core EPYC)."""
        memory_format = (torch.channels_last if self.device.type == "cpu" and channels_last_on_cpu(shape)
                         else torch.contiguous_format)
        return torch.empty((self.capacity, *shape), dtype=dtype, device=self.device,
                           memory_format=memory_format).zero_()

    def add(self, observations: Observations, labels: torch.Tensor) -> None:
        """Appends n rows (each group (n, ...), labels (n, num_actions)), overwriting the oldest."""
        n = labels.shape[0]
        if n > self.capacity:  # only the newest capacity rows can be kept
            observations = {g: v[-self.capacity :] for g, v in observations.items()}
            labels, n = labels[-self.capacity :], self.capacity
        rows = (self.position + torch.arange(n, device=self.device)) % self.capacity
        for group, buffer in self.observations.items():
            buffer[rows] = observations[group].to(buffer.dtype)
        self.labels[rows] = labels
        self.position = (self.position + n) % self.capacity
        self.size = min(self.capacity, self.size + n)

    def mini_batches(
        self, num_mini_batches: int, num_epochs: int, generator: torch.Generator
    ) -> Iterator[tuple[dict[str, torch.Tensor], torch.Tensor]]:
        """num_epochs passes over the filled rows in a fresh random order each, num_mini_batches
        minibatches per pass (every row visited once per pass; the last minibatch takes the remainder)."""
        batch_size = max(1, self.size // num_mini_batches)
        for _ in range(num_epochs):
            order = torch.randperm(self.size, generator=generator, device=self.device)
            for index in range(num_mini_batches):
                end = self.size if index == num_mini_batches - 1 else (index + 1) * batch_size
                rows = order[index * batch_size : end]
                if rows.numel():
                    yield {g: v[rows] for g, v in self.observations.items()}, self.labels[rows]

    def state_dict(self) -> dict[str, Any]:
        return {"observations": self.observations, "labels": self.labels, "position": self.position, "size": self.size}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        if int(state["labels"].shape[0]) != self.capacity:
            raise CanterError(f"checkpoint's DAgger dataset holds {state['labels'].shape[0]} rows, "
                              f"this run's algo.dagger.dataset_size is {self.capacity}")
        for group, buffer in self.observations.items():
            buffer.copy_(state["observations"][group])
        self.labels.copy_(state["labels"])
        self.position, self.size = int(state["position"]), int(state["size"])


class EnvExpert:
    """A scripted expert `controller(env) -> actions` as an Expert: called with the observations, it
    reads the env it was built for; its state_dict (if any) is checkpointed with the algorithm."""

    def __init__(self, controller: Any, env: Any):
        self.controller = controller
        self.env = env

    def __call__(self, obs: Observations) -> torch.Tensor:
        return self.controller(self.env)

    def state_dict(self) -> dict[str, Any] | None:
        return self.controller.state_dict() if hasattr(self.controller, "state_dict") else None

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if hasattr(self.controller, "load_state_dict"):
            self.controller.load_state_dict(state)


def policy_expert(teacher: ActorCritic) -> Expert:
    """A trained policy as expert: its deterministic action on its own (e.g. privileged) groups."""
    teacher.eval()

    def expert(obs: Observations) -> torch.Tensor:
        with torch.no_grad():
            return teacher.act_inference(obs)

    return expert


class AuxiliaryHead(nn.Module):
    """The auxiliary task's head: actor features (..., feature_dim) -> the predicted normalized target
    group (..., target_dim), one hidden ELU layer; `normalizer` keeps the target's running statistics."""

    def __init__(self, feature_dim: int, target_dim: int, hidden_dim: int, *, generator: torch.Generator) -> None:
        super().__init__()
        self.normalizer = EmpiricalNormalizer((target_dim,))
        self.head = build_mlp(feature_dim, (hidden_dim,), target_dim, "elu", output_gain=1.0, generator=generator)

    def error(self, features: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """Mean over samples of the squared error summed over the target's normalized components: ()."""
        return (self.head(features).float() - self.normalizer(targets)).square().sum(-1).mean()


def auxiliary_target_dim(group: str, observation_shapes: Mapping[str, tuple[int, ...]] | None) -> int:
    """The width of the auxiliary target group; one-line ConfigErrors for a group the env lacks or an image."""
    where = f"algo.dagger.auxiliary_group: {group!r}"
    if observation_shapes is None or group not in observation_shapes:
        raise ConfigError(f"{where} is not an observation group of this env (has {sorted(observation_shapes or {})})")
    shape = tuple(observation_shapes[group])
    if len(shape) != 1:
        raise ConfigError(f"{where} must be a 1-D group (num_envs, dim) to regress, got {shape}")
    return int(shape[0])


class Dagger:
    """The DAgger learner: the student policy, its Adam optimizer, the dataset and the generator.

    Exposes what the OnPolicyRunner uses of an algorithm (cfg, device, policy, optimizer,
    learning_rate, generator, act / process_env_step / compute_returns / update, modes, state).
    observation_dtypes: dtypes of the groups as the env emits them (uint8 images stay uint8 here).
    observation_shapes: the env's groups, name -> per-env shape (needed for cfg.dagger.auxiliary_group).
    init_generator: CPU generator the auxiliary head's initial parameters are drawn from.
    """

    algo_name = "dagger"

    def __init__(
        self,
        policy: ActorCritic,
        cfg: AlgoCfg,
        *,
        num_envs: int,
        device: torch.device | str,
        generator: torch.Generator,
        expert: Expert | None,
        observation_dtypes: Mapping[str, torch.dtype] | None = None,
        observation_shapes: Mapping[str, tuple[int, ...]] | None = None,
        init_generator: torch.Generator | None = None,
    ) -> None:
        if cfg.algo != "dagger":
            raise ConfigError(f"algo.algo: Dagger needs 'dagger', got {cfg.algo!r}")
        if expert is None:
            raise ConfigError("algo dagger needs an expert: the task's scripted expert or a teacher run")
        self.cfg = cfg
        self.device = torch.device(device)
        self.generator = generator
        self.expert = expert
        self.policy = policy.to(self.device)
        self.student_groups = tuple(dict.fromkeys(policy.actor_obs_groups))
        shapes = {g: policy.observation_shapes[g] for g in self.student_groups}
        self.auxiliary_group = cfg.dagger.auxiliary_group
        self.auxiliary: AuxiliaryHead | None = None
        trainable: nn.Module = self.policy
        if self.auxiliary_group:
            target_dim = auxiliary_target_dim(self.auxiliary_group, observation_shapes)
            if policy.is_recurrent:
                raise ConfigError("algo.dagger.auxiliary_group needs a feed-forward student (policy.rnn_type none)")
            feature_dim = policy._feature_dim(policy.actor_obs_groups)
            self.auxiliary = AuxiliaryHead(feature_dim, target_dim, cfg.dagger.auxiliary_hidden_dim,
                                           generator=init_generator or torch.Generator().manual_seed(0)).to(self.device)
            shapes.setdefault(self.auxiliary_group, (target_dim,))
            trainable = nn.ModuleList([self.policy, self.auxiliary])
        self._trainable = trainable  # what the optimizer steps, the gradients all-reduce and the clip covers
        self.dataset = AggregatedDataset(cfg.dagger.dataset_size, shapes, policy.num_actions, self.device,
                                         observation_dtypes)
        self.learning_rate = torch.tensor(cfg.learning_rate, device=self.device)
        self.optimizer = torch.optim.Adam(trainable.parameters(), lr=self.learning_rate, fused=True)
        self.iteration = 0  # DAgger iterations done: selects β
        self._expert_steps = torch.zeros((), device=self.device)
        self._steps = 0

    @property
    def beta(self) -> float:
        """The probability that the expert drives a step in the current iteration."""
        return self.cfg.dagger.beta(self.iteration)

    # --- rollout ------------------------------------------------------------------------------------

    @torch.no_grad()
    def act(self, obs: Observations) -> torch.Tensor:
        """The mixture policy's actions (num_envs, num_actions); records (student obs, expert label)."""
        self.policy.update_normalization(obs)
        if self.auxiliary is not None:
            update_normalizers({self.auxiliary_group: self.auxiliary.normalizer}, obs)
        labels = self.expert(obs).to(self.device, torch.float32)
        student = self.policy.act_inference(obs)
        expert_drives = torch.rand(labels.shape[0], generator=self.generator, device=self.device) < self.beta
        self.dataset.add({g: obs[g] for g in self.dataset.observations}, labels)
        self._expert_steps += expert_drives.sum()
        self._steps += labels.shape[0]
        return torch.where(expert_drives.unsqueeze(-1), labels, student)

    @torch.no_grad()
    def process_env_step(self, rewards: torch.Tensor, terminated: torch.Tensor, truncated: torch.Tensor,
                         extras: Mapping[str, Any] | None = None) -> None:
        """Resets the student's memory of envs that ended (rewards play no part in imitation)."""
        self.policy.reset(terminated | truncated)

    def compute_returns(self, last_obs: Observations) -> None:
        """Nothing to compute: imitation needs no returns."""

    # --- learning -----------------------------------------------------------------------------------

    def update(self) -> dict[str, torch.Tensor]:
        """Regresses the expert's actions over the dataset; returns the mean imitation loss (and the
        auxiliary task's mean error), β of this iteration, the share of steps the expert drove and the
        dataset size (() tensors and floats)."""
        cfg = self.cfg
        losses, auxiliary_errors = [], []
        autocast = bf16_autocast(cfg.autocast, self.device)
        for observations, labels in self.dataset.mini_batches(cfg.num_mini_batches, cfg.num_learning_epochs,
                                                              self.generator):
            with torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=autocast):
                if self.auxiliary is None:
                    actions = self.policy.act_inference(observations)
                else:
                    features = self.policy.encode(observations, self.policy.actor_obs_groups)
                    actions = self.policy.distribution_from_features(features)[0]
                    auxiliary_error = self.auxiliary.error(features, observations[self.auxiliary_group])
            loss = (actions.float() - labels).square().sum(-1).mean()
            losses.append(loss.detach())
            if self.auxiliary is not None:
                auxiliary_errors.append(auxiliary_error.detach())
                loss = loss + cfg.dagger.auxiliary_coef * auxiliary_error
            gradient_step(loss, self._trainable, self.optimizer, cfg.max_grad_norm)
        stats = {
            "imitation": torch.stack(losses).mean() if losses else torch.zeros((), device=self.device),
            "beta": float(self.beta),
            "expert_share": self._expert_steps / max(self._steps, 1),
            "dataset_size": float(self.dataset.size),
        }
        if self.auxiliary is not None:
            stats["auxiliary"] = torch.stack(auxiliary_errors).mean() if auxiliary_errors else torch.zeros((), device=self.device)
        self.iteration += 1
        self._expert_steps = torch.zeros((), device=self.device)
        self._steps = 0
        return stats

    # --- modes and checkpoints -----------------------------------------------------------------------

    def train_mode(self) -> None:
        self._trainable.train()

    def eval_mode(self) -> None:
        self._trainable.eval()

    def state_dict(self) -> dict[str, Any]:
        """algo name, student, optimizer, learning rate, generator, DAgger iteration, dataset, the
        expert's state (a scripted expert's per-env phase) and the auxiliary head (None without one)."""
        return {
            **learner_state(self),
            "dagger_iteration": self.iteration,
            "dataset": self.dataset.state_dict(),
            "expert": self.expert.state_dict() if hasattr(self.expert, "state_dict") else None,
            "auxiliary": self.auxiliary.state_dict() if self.auxiliary is not None else None,
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        saved_auxiliary = state.get("auxiliary")
        if (saved_auxiliary is None) != (self.auxiliary is None):
            raise CanterError("checkpoint's DAgger learner " + ("has no" if saved_auxiliary is None else "has an")
                              + " auxiliary head, this run's algo.dagger.auxiliary_group is "
                              + repr(self.auxiliary_group))
        load_learner_state(self, state)
        if self.auxiliary is not None and saved_auxiliary is not None:
            self.auxiliary.load_state_dict(saved_auxiliary)
        self.iteration = int(state["dagger_iteration"])
        self.dataset.load_state_dict(state["dataset"])
        if state.get("expert") is not None and hasattr(self.expert, "load_state_dict"):
            self.expert.load_state_dict(state["expert"])
