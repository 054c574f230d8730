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
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

import torch

from canter.core.errors import CanterError, ConfigError
from canter.rl.algorithm import bf16_autocast, gradient_step, learner_state, load_learner_state
from canter.rl.config import AlgoCfg
from canter.rl.encoders import channels_last_on_cpu
from canter.rl.modules import ActorCritic

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


class Dagger:
    """The DAgger learner: the student policy, its Adam optimizer, the dataset and the generator.

    Exposes what the OnPolicyRunner uses of an algorithm (cfg, device, policy, optimizer,
    learning_rate, generator, act / process_env_step / compute_returns / update, modes, state).
    observation_dtypes: dtypes of the groups as the env emits them (uint8 images stay uint8 here).
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
        self.dataset = AggregatedDataset(
            cfg.dagger.dataset_size,
            {g: policy.observation_shapes[g] for g in self.student_groups},
            policy.num_actions,
            self.device,
            observation_dtypes,
        )
        self.learning_rate = torch.tensor(cfg.learning_rate, device=self.device)
        self.optimizer = torch.optim.Adam(self.policy.parameters(), lr=self.learning_rate, fused=True)
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
        labels = self.expert(obs).to(self.device, torch.float32)
        student = self.policy.act_inference(obs)
        expert_drives = torch.rand(labels.shape[0], generator=self.generator, device=self.device) < self.beta
        self.dataset.add({g: obs[g] for g in self.student_groups}, labels)
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
        """Regresses the expert's actions over the dataset; returns the mean loss, β of this
        iteration, the share of steps the expert drove and the dataset size (a () tensor and floats)."""
        cfg = self.cfg
        losses = []
        for observations, labels in self.dataset.mini_batches(cfg.num_mini_batches, cfg.num_learning_epochs,
                                                              self.generator):
            with torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=bf16_autocast(cfg.autocast, self.device)):
                actions = self.policy.act_inference(observations)
            loss = (actions.float() - labels).square().sum(-1).mean()
            gradient_step(loss, self.policy, self.optimizer, cfg.max_grad_norm)
            losses.append(loss.detach())
        stats = {
            "imitation": torch.stack(losses).mean() if losses else torch.zeros((), device=self.device),
            "beta": float(self.beta),
            "expert_share": self._expert_steps / max(self._steps, 1),
            "dataset_size": float(self.dataset.size),
        }
        self.iteration += 1
        self._expert_steps = torch.zeros((), device=self.device)
        self._steps = 0
        return stats

    # --- modes and checkpoints -----------------------------------------------------------------------

    def train_mode(self) -> None:
        self.policy.train()

    def eval_mode(self) -> None:
        self.policy.eval()

    def state_dict(self) -> dict[str, Any]:
        """algo name, student, optimizer, learning rate, generator, DAgger iteration, dataset, and
        the expert's state (a scripted expert's per-env phase)."""
        return {
            **learner_state(self),
            "dagger_iteration": self.iteration,
            "dataset": self.dataset.state_dict(),
            "expert": self.expert.state_dict() if hasattr(self.expert, "state_dict") else None,
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        load_learner_state(self, state)
        self.iteration = int(state["dagger_iteration"])
        self.dataset.load_state_dict(state["dataset"])
        if state.get("expert") is not None and hasattr(self.expert, "load_state_dict"):
            self.expert.load_state_dict(state["expert"])
