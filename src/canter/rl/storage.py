"""Preallocated rollout storage on the env device, and the minibatch generators that read it.

Every buffer is time-major, (num_transitions_per_env, num_envs, ...). A transition is written in two
halves so that nothing the env may overwrite in place is kept by reference: `store_policy_step` copies
the observations and the policy outputs when the action is chosen, `store_env_step` copies the reward
and episode flags after the env stepped and advances the step counter. Nothing here syncs with the host.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from typing import NamedTuple

import torch

from canter.core.memory import check_memory
from canter.rl.gae import compute_gae, normalize_advantages

HiddenState = tuple[torch.Tensor, ...]


class MiniBatch(NamedTuple):
    """One minibatch. Flat tensors have B rows; for recurrent minibatches B = T·n, time-major.

    observations: group -> (B, dim), or (T, n, dim) for a recurrent minibatch of n whole env sequences.
    episode_starts: (T, n) bool, True where step t begins a new episode (recurrent only, else None).
    actor_state, critic_state: the memories' states at the rollout start, (num_layers, n, hidden)
        tensors (recurrent only, else None).
    """

    observations: dict[str, torch.Tensor]
    actions: torch.Tensor  # (B, num_actions)
    old_log_prob: torch.Tensor  # (B,)
    old_mean: torch.Tensor  # (B, num_actions)
    old_std: torch.Tensor  # (B, num_actions)
    old_values: torch.Tensor  # (B,)
    returns: torch.Tensor  # (B,)
    advantages: torch.Tensor  # (B,)
    episode_starts: torch.Tensor | None = None
    actor_state: HiddenState | None = None
    critic_state: HiddenState | None = None


# the per-transition tensors of a rollout besides the observations (RolloutStorage.state_dict)
_ROLLOUT_FIELDS = ("actions", "log_probs", "action_mean", "action_std", "values", "rewards", "terminated",
                   "truncated", "returns", "advantages")


class RolloutStorage:
    """One rollout of num_transitions_per_env steps of num_envs envs.

    observation_shapes: the groups to keep, name -> (dim,) or (C, H, W) for images.
    observation_dtypes: group -> dtype as the env emits it (default float32): uint8 RGB images are kept
    as uint8, so 4096 envs × 24 steps × 4×64×64 pixels take 1.6 GB rather than 6.4. rewards are stored
    as given (the algorithm passes them with the time-out bootstrap already added).
    """

    def __init__(
        self,
        *,
        num_envs: int,
        num_transitions_per_env: int,
        observation_shapes: Mapping[str, tuple[int, ...]],
        num_actions: int,
        device: torch.device | str,
        observation_dtypes: Mapping[str, torch.dtype] | None = None,
    ) -> None:
        self.num_envs = int(num_envs)
        self.num_transitions_per_env = int(num_transitions_per_env)
        self.device = torch.device(device)
        steps_envs = (self.num_transitions_per_env, self.num_envs)
        transitions = self.num_transitions_per_env * self.num_envs
        # float32: observations, actions, mean, std, log prob, value, reward, return, advantage; two flags
        per_transition = 4 * (sum(math.prod(shape) for shape in observation_shapes.values()) + 3 * num_actions + 5) + 2
        check_memory("algo.num_steps_per_env", transitions * per_transition, self.device,
                     f"rollout storage of {self.num_transitions_per_env:,} steps x {self.num_envs:,} envs "
                     f"x {per_transition:,} bytes")

        def zeros(*shape: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
            return torch.zeros((*steps_envs, *shape), device=self.device, dtype=dtype)

        dtypes = dict(observation_dtypes or {})
        self.observations = {group: zeros(*shape, dtype=dtypes.get(group, torch.float32))
                             for group, shape in observation_shapes.items()}
        self.actions = zeros(num_actions)
        self.log_probs = zeros()
        self.action_mean = zeros(num_actions)
        self.action_std = zeros(num_actions)
        self.values = zeros()
        self.rewards = zeros()
        self.terminated = zeros(dtype=torch.bool)
        self.truncated = zeros(dtype=torch.bool)
        self.returns = zeros()
        self.advantages = zeros()
        self.initial_actor_state: HiddenState | None = None
        self.initial_critic_state: HiddenState | None = None
        self.step = 0

    def state_dict(self) -> dict[str, object]:
        """The stored rollout (references to the live tensors) and the step count, for a checkpoint
        of an overlapped run whose next update has not run yet."""
        return {"step": self.step, "observations": dict(self.observations),
                **{name: getattr(self, name) for name in _ROLLOUT_FIELDS}}

    def load_state_dict(self, state: Mapping[str, object]) -> None:
        """Copies a `state_dict` of a storage of the same shapes into this one."""
        saved_obs = state["observations"]
        assert isinstance(saved_obs, Mapping)
        for group, tensor in self.observations.items():
            tensor.copy_(saved_obs[group])
        for name in _ROLLOUT_FIELDS:
            getattr(self, name).copy_(state[name])  # type: ignore[arg-type]
        self.step = int(state["step"])  # type: ignore[call-overload]

    # --- writing --------------------------------------------------------------------------------------

    def store_policy_step(
        self,
        *,
        observations: Mapping[str, torch.Tensor],
        actions: torch.Tensor,
        log_probs: torch.Tensor,
        action_mean: torch.Tensor,
        action_std: torch.Tensor,
        values: torch.Tensor,
    ) -> None:
        """Copies what the policy saw and chose at the current step (each (num_envs, ...))."""
        if self.step >= self.num_transitions_per_env:
            raise RuntimeError("RolloutStorage is full: call clear() (the algorithm's update does) first")
        t = self.step
        for group, buffer in self.observations.items():
            buffer[t].copy_(observations[group])
        self.actions[t].copy_(actions)
        self.log_probs[t].copy_(log_probs)
        self.action_mean[t].copy_(action_mean)
        self.action_std[t].copy_(action_std)
        self.values[t].copy_(values)

    def store_env_step(
        self, *, rewards: torch.Tensor, terminated: torch.Tensor, truncated: torch.Tensor
    ) -> None:
        """Copies the env's answer to the current step's action and advances to the next step."""
        t = self.step
        self.rewards[t].copy_(rewards)
        self.terminated[t].copy_(terminated)
        self.truncated[t].copy_(truncated)
        self.step += 1

    def store_initial_hidden_states(self, actor_state: HiddenState, critic_state: HiddenState) -> None:
        """Copies the recurrent states at the rollout start (the start of every training sequence)."""
        if self.initial_actor_state is None or self.initial_critic_state is None:
            self.initial_actor_state = tuple(torch.zeros_like(s) for s in actor_state)
            self.initial_critic_state = tuple(torch.zeros_like(s) for s in critic_state)
        for buffer, state in zip(self.initial_actor_state, actor_state, strict=True):
            buffer.copy_(state)
        for buffer, state in zip(self.initial_critic_state, critic_state, strict=True):
            buffer.copy_(state)

    def clear(self) -> None:
        """Starts a new rollout (buffers are overwritten, not zeroed)."""
        self.step = 0

    # --- returns --------------------------------------------------------------------------------------

    @property
    def dones(self) -> torch.Tensor:
        """(T, N) bool: the episode ended at step t (terminated or timed out)."""
        return self.terminated | self.truncated

    def compute_returns(self, last_values: torch.Tensor, gamma: float, lam: float, normalize: bool,
                        gae: Callable[..., tuple[torch.Tensor, torch.Tensor]] = compute_gae) -> None:
        """Fills returns and advantages by GAE (see canter.rl.gae); normalize: per-rollout advantages.

        last_values: (num_envs,) V of the observation after the last step. gae: compute_gae, or a
        compiled copy of it.
        """
        if self.step != self.num_transitions_per_env:
            raise RuntimeError(
                f"RolloutStorage holds {self.step} of {self.num_transitions_per_env} steps; "
                "compute_returns needs a full rollout"
            )
        returns, advantages = gae(self.rewards, self.values, self.dones, last_values, gamma, lam)
        self.returns.copy_(returns)
        self.advantages.copy_(normalize_advantages(advantages) if normalize else advantages)

    # --- reading --------------------------------------------------------------------------------------

    def mini_batch_generator(
        self, num_mini_batches: int, num_epochs: int, generator: torch.Generator
    ) -> Iterator[MiniBatch]:
        """Shuffled transitions: each epoch visits all T·N transitions exactly once, in a random
        permutation from `generator` (on the storage device) split into num_mini_batches parts whose
        sizes differ by at most one."""
        batch_size = self.num_transitions_per_env * self.num_envs
        if num_mini_batches > batch_size:
            raise ValueError(f"num_mini_batches={num_mini_batches} exceeds the {batch_size} transitions")
        for _ in range(num_epochs):
            permutation = torch.randperm(batch_size, generator=generator, device=self.device)
            for indices in permutation.tensor_split(num_mini_batches):
                yield self._gather(lambda buffer, i=indices: buffer.flatten(0, 1)[i], flatten=False)

    def recurrent_mini_batch_generator(
        self, num_mini_batches: int, num_epochs: int, generator: torch.Generator
    ) -> Iterator[MiniBatch]:
        """Whole env sequences: each epoch splits a random permutation of the envs into
        num_mini_batches groups; a minibatch holds the full T-step rollout of its envs, their
        episode_starts and their recurrent states at the rollout start."""
        if self.initial_actor_state is None or self.initial_critic_state is None:
            raise RuntimeError(
                "recurrent minibatches need store_initial_hidden_states() at the rollout start"
            )
        if num_mini_batches > self.num_envs:
            raise ValueError(f"num_mini_batches={num_mini_batches} exceeds num_envs={self.num_envs}")
        dones = self.dones
        episode_starts = torch.zeros_like(dones)
        # the state is zeroed before step t when the episode ended at step t-1
        episode_starts[1:] = dones[:-1]
        for _ in range(num_epochs):
            permutation = torch.randperm(self.num_envs, generator=generator, device=self.device)
            for envs in permutation.tensor_split(num_mini_batches):
                batch = self._gather(lambda buffer, e=envs: buffer[:, e], flatten=True)
                yield batch._replace(
                    episode_starts=episode_starts[:, envs],
                    actor_state=tuple(s[:, envs] for s in self.initial_actor_state),
                    critic_state=tuple(s[:, envs] for s in self.initial_critic_state),
                )

    def _gather(self, select: Callable[[torch.Tensor], torch.Tensor], flatten: bool) -> MiniBatch:
        """A MiniBatch of select(buffer) for every (T, N, ...) buffer; flatten: (T, n) -> T·n for all
        but the observations (recurrent minibatches keep those as sequences)."""

        def take(buffer: torch.Tensor) -> torch.Tensor:
            selected = select(buffer)
            return selected.flatten(0, 1) if flatten else selected

        return MiniBatch(
            observations={group: select(buffer) for group, buffer in self.observations.items()},
            actions=take(self.actions),
            old_log_prob=take(self.log_probs),
            old_mean=take(self.action_mean),
            old_std=take(self.action_std),
            old_values=take(self.values),
            returns=take(self.returns),
            advantages=take(self.advantages),
        )
