"""The recurrent actor-critic: a GRU/LSTM memory in front of the actor MLP and another in front of the
critic MLP, with per-env resets at episode ends.

Rollout: `act` / `evaluate` advance the memories one step for all envs; `reset(dones)` zeroes the state
of envs whose episode ended. Training (truncated backpropagation through time over one rollout):
`forward_train` replays whole sequences (T, n_envs) from the state stored at the rollout start and
zeroes the state before every step t that starts a new episode, exactly as the rollout did, so the
training forward pass reproduces the rollout's outputs.

Hidden states are tuples of (num_layers, num_envs, hidden_dim) tensors: (h,) for a GRU, (h, c) for an
LSTM.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import torch
from torch import nn

from canter.core.errors import ConfigError
from canter.rl.config import PolicyCfg
from canter.rl.modules import ActorCritic, HiddenState, Observations


def reset_hidden_state(state: HiddenState, dones: torch.Tensor) -> HiddenState:
    """Zeroes the state of envs where dones (num_envs,) is True: h ← h·(1 - done)."""
    keep = (~dones).to(state[0].dtype).unsqueeze(-1)
    return tuple(s * keep for s in state)


class Memory(nn.Module):
    """A multi-layer GRU or LSTM stepped over time: (..., input_dim) -> (..., hidden_dim).

    Weights are drawn U(-1/√hidden_dim, 1/√hidden_dim) (PyTorch's scheme) from `generator`.
    """

    def __init__(
        self,
        input_dim: int,
        rnn_type: str,
        hidden_dim: int,
        num_layers: int,
        *,
        generator: torch.Generator,
    ) -> None:
        super().__init__()
        if rnn_type not in ("gru", "lstm"):
            raise ConfigError(f"policy.rnn_type: a memory needs 'gru' or 'lstm', got {rnn_type!r}")
        rnn_class = nn.GRU if rnn_type == "gru" else nn.LSTM
        self.rnn = rnn_class(input_dim, hidden_dim, num_layers, device="meta").to_empty(device="cpu")
        bound = 1.0 / math.sqrt(hidden_dim)
        for parameter in self.rnn.parameters():
            nn.init.uniform_(parameter, -bound, bound, generator=generator)
        self.is_lstm = rnn_type == "lstm"
        self.hidden_dim = hidden_dim
        self.num_layers = num_layers

    def initial_state(self, batch_size: int, device: torch.device, dtype: torch.dtype) -> HiddenState:
        """Zero state: one (or two, LSTM) (num_layers, batch_size, hidden_dim) tensors."""
        shape = (self.num_layers, batch_size, self.hidden_dim)
        return tuple(torch.zeros(shape, device=device, dtype=dtype) for _ in range(2 if self.is_lstm else 1))

    def step(self, x: torch.Tensor, state: HiddenState) -> tuple[torch.Tensor, HiddenState]:
        """One time step: x (B, input_dim) -> (output (B, hidden_dim), new state)."""
        if self.is_lstm:
            output, (h, c) = self.rnn(x.unsqueeze(0), (state[0], state[1]))
            return output.squeeze(0), (h, c)
        output, h = self.rnn(x.unsqueeze(0), state[0])
        return output.squeeze(0), (h,)

    def sequence(self, x: torch.Tensor, episode_starts: torch.Tensor, state: HiddenState) -> torch.Tensor:
        """A whole sequence with resets: x (T, B, input_dim) -> outputs (T, B, hidden_dim).

        episode_starts: (T, B) bool, True where step t is the first of a new episode (the state is
        zeroed before that step). state: the state before step 0.
        """
        outputs = []
        for t in range(x.shape[0]):
            state = reset_hidden_state(state, episode_starts[t])
            output, state = self.step(x[t], state)
            outputs.append(output)
        return torch.stack(outputs)


class ActorCriticRecurrent(ActorCritic):
    """ActorCritic with one recurrent memory for the actor and one for the critic.

    The memories read the normalized, concatenated observation groups; the MLPs read the memory
    outputs. States are created (zero) on first use with the batch size of the observations, and
    re-created if that batch size changes (e.g. a play env with fewer envs).
    """

    is_recurrent = True

    def __init__(
        self,
        observation_shapes: Mapping[str, tuple[int, ...]],
        num_actions: int,
        cfg: PolicyCfg,
        *,
        init_generator: torch.Generator,
    ) -> None:
        if cfg.rnn_type == "none":
            raise ConfigError("policy.rnn_type: ActorCriticRecurrent needs 'gru' or 'lstm', got 'none'")
        super().__init__(observation_shapes, num_actions, cfg, init_generator=init_generator)
        self.shared_features = False  # actor and critic each run their own memory over the features
        self.actor_memory = Memory(
            super()._feature_dim(self.actor_obs_groups),
            cfg.rnn_type,
            cfg.rnn_hidden_dim,
            cfg.rnn_num_layers,
            generator=init_generator,
        )
        self.critic_memory = Memory(
            super()._feature_dim(self.critic_obs_groups),
            cfg.rnn_type,
            cfg.rnn_hidden_dim,
            cfg.rnn_num_layers,
            generator=init_generator,
        )
        self._actor_state: HiddenState | None = None
        self._critic_state: HiddenState | None = None

    def _feature_dim(self, groups: tuple[str, ...]) -> int:
        return self.cfg.rnn_hidden_dim

    def _current_state(self, memory: Memory, state: HiddenState | None, like: torch.Tensor) -> HiddenState:
        if state is None or state[0].shape[1] != like.shape[0]:
            return memory.initial_state(like.shape[0], like.device, like.dtype)
        return state

    # --- rollout interface ----------------------------------------------------------------------------

    def action_distribution(self, obs: Observations) -> tuple[torch.Tensor, torch.Tensor]:
        """(mean, std), each (num_envs, num_actions); advances the actor memory one step."""
        x = self.encode(obs, self.actor_obs_groups)
        state = self._current_state(self.actor_memory, self._actor_state, x)
        features, self._actor_state = self.actor_memory.step(x, state)
        return self.distribution_from_features(features)

    def evaluate(self, obs: Observations, *, advance_memory: bool = True) -> torch.Tensor:
        """V(s): (num_envs,). advance_memory=False evaluates without committing the new critic state
        (used for the bootstrap value after the last rollout step)."""
        x = self.encode(obs, self.critic_obs_groups, "critic")
        state = self._current_state(self.critic_memory, self._critic_state, x)
        features, new_state = self.critic_memory.step(x, state)
        if advance_memory:
            self._critic_state = new_state
        return self.critic(features).squeeze(-1)

    def reset(self, dones: torch.Tensor | None = None) -> None:
        """Zeroes the memory of envs where dones (num_envs,) is True; dones=None forgets every env."""
        if dones is None:
            self._actor_state = self._critic_state = None
            return
        if self._actor_state is not None:
            self._actor_state = reset_hidden_state(self._actor_state, dones)
        if self._critic_state is not None:
            self._critic_state = reset_hidden_state(self._critic_state, dones)

    def hidden_states(self, batch_size: int | None = None) -> tuple[HiddenState, HiddenState] | None:
        """(actor, critic) states, created as zeros for `batch_size` envs if they do not exist yet."""
        if batch_size is not None:
            parameter = next(self.parameters())
            like = torch.empty((batch_size, 0), device=parameter.device, dtype=parameter.dtype)
            self._actor_state = self._current_state(self.actor_memory, self._actor_state, like)
            self._critic_state = self._current_state(self.critic_memory, self._critic_state, like)
        if self._actor_state is None or self._critic_state is None:
            return None
        return self._actor_state, self._critic_state

    def set_hidden_states(self, actor_state: HiddenState, critic_state: HiddenState) -> None:
        """Restores (actor, critic) states returned by `hidden_states` (e.g. from a checkpoint),
        copied onto the policy's device."""
        device = next(self.parameters()).device
        self._actor_state = tuple(s.to(device).clone() for s in actor_state)
        self._critic_state = tuple(s.to(device).clone() for s in critic_state)

    # --- training interface ---------------------------------------------------------------------------

    def forward_train(
        self,
        obs: Observations,
        episode_starts: torch.Tensor | None = None,
        actor_state: HiddenState | None = None,
        critic_state: HiddenState | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Replays sequences: obs (T, n, dim) per group, episode_starts (T, n) bool, states at step 0
        ((num_layers, n, hidden) tensors). Returns mean (T·n, A), std (T·n, A), values (T·n,),
        flattened time-major like the storage's flattened minibatch tensors."""
        if episode_starts is None or actor_state is None or critic_state is None:
            raise ValueError("forward_train of a recurrent policy needs episode_starts and both states")
        num_steps, batch_size = episode_starts.shape
        actor_x = self.encode(obs, self.actor_obs_groups)
        actor_features = self.actor_memory.sequence(actor_x, episode_starts, actor_state)
        mean, std = self.distribution_from_features(actor_features.reshape(num_steps * batch_size, -1))
        critic_x = self.encode(obs, self.critic_obs_groups, "critic")
        critic_features = self.critic_memory.sequence(critic_x, episode_starts, critic_state)
        values = self.critic(critic_features.reshape(num_steps * batch_size, -1)).squeeze(-1)
        return mean, std, values
