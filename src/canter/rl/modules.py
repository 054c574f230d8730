"""The feed-forward actor-critic: MLP builder, observation-group encoding, Gaussian policy.

Parameters are drawn from an explicit CPU generator (layers are built on the meta device, so the
global RNG is never touched) and the policy is moved to its device afterwards: the same seed gives
the same initial network on every device.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import NamedTuple

import torch
from torch import nn

from canter.core.errors import ConfigError
from canter.rl.config import DEFAULT_CRITIC_OBS_GROUPS, PolicyCfg
from canter.rl.distributed import update_normalizers
from canter.rl.distributions import (
    categorical_entropy,
    categorical_kl,
    categorical_log_prob,
    categorical_sample,
    gaussian_entropy,
    gaussian_kl,
    gaussian_log_prob,
    gaussian_sample,
)
from canter.rl.encoders import ACTIVATIONS, ImageEncoder, init_linear
from canter.rl.normalizer import EmpiricalNormalizer

Observations = Mapping[str, torch.Tensor]
HiddenState = tuple[torch.Tensor, ...]



class PolicyStep(NamedTuple):
    """One sampled step of the policy; every tensor (num_envs, num_actions) except log_prob (num_envs,).
    For a categorical policy `actions` are one-hot rows, `mean` the logits and `std` zeros."""

    actions: torch.Tensor
    log_prob: torch.Tensor
    mean: torch.Tensor
    std: torch.Tensor


class MLP(nn.Sequential):
    """Linear-activation blocks and a linear output layer (see build_mlp). Under torch.autocast the
    hidden layers, nearly all of the FLOPs, run in autocast's dtype and the output layer in float32
    on float32 inputs: in bfloat16 a value of 40 is only known to ±0.125, and a rounded action mean
    would move PPO's ratio away from 1 before any gradient step. Without autocast: nn.Sequential."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not torch.is_autocast_enabled(x.device.type):
            return super().forward(x)
        *hidden, output = self
        for layer in hidden:
            x = layer(x)
        with torch.autocast(x.device.type, enabled=False):
            return output(x.float())


def build_mlp(
    input_dim: int,
    hidden_dims: Sequence[int],
    output_dim: int,
    activation: str,
    *,
    output_gain: float,
    generator: torch.Generator,
) -> MLP:
    """Linear-activation blocks then a linear output layer: (..., input_dim) -> (..., output_dim).

    Hidden layers use the orthogonal gain √2; the output layer uses `output_gain` (small for the
    actor so that initial actions stay near zero, 1 for the critic).
    """
    layers: list[nn.Module] = []
    in_dim = input_dim
    for width in hidden_dims:
        layers += [init_linear(in_dim, width, math.sqrt(2.0), generator), ACTIVATIONS[activation]()]
        in_dim = width
    layers.append(init_linear(in_dim, output_dim, output_gain, generator))
    return MLP(*layers)


def resolve_obs_groups(
    observation_shapes: Mapping[str, tuple[int, ...]], cfg: PolicyCfg
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(actor groups, critic groups) present in the env; a critic left at the default group ("critic")
    in an env without one falls back to the actor's groups (groups named otherwise must all exist).

    Vector groups must be (dim,); the groups named in cfg.image_obs_groups must be images (C, H, W).
    """
    for group, shape in observation_shapes.items():
        if group in cfg.image_obs_groups:
            if len(shape) != 3:
                raise ConfigError(f"policy.image_obs_groups: group {group!r} is not an image (C, H, W), got {shape}")
        elif len(shape) == 3:
            raise ConfigError(f"policy: observation group {group!r} is an image {tuple(shape)}: name it in "
                              f"policy.image_obs_groups to encode it with the CNN (policy.cnn)")
        elif len(shape) != 1:
            raise ConfigError(f"policy: observation group {group!r} must be 1-D (num_envs, dim), got {shape}")
    missing = [g for g in (*cfg.actor_obs_groups, *cfg.image_obs_groups) if g not in observation_shapes]
    if missing:
        raise ConfigError(
            f"policy.actor_obs_groups: env has no group {missing[0]!r} (has {sorted(observation_shapes)})"
        )
    absent = [g for g in cfg.critic_obs_groups if g not in observation_shapes]
    if absent and tuple(cfg.critic_obs_groups) == DEFAULT_CRITIC_OBS_GROUPS:
        return cfg.actor_obs_groups, cfg.actor_obs_groups
    if absent:
        raise ConfigError(f"policy.critic_obs_groups: env has no group {absent[0]!r} (has {sorted(observation_shapes)})")
    return cfg.actor_obs_groups, cfg.critic_obs_groups


class ActorCritic(nn.Module):
    """Gaussian actor and value critic, each an MLP over its concatenated observation groups.

    The action std is state-independent: a learned (num_actions,) parameter, either σ itself
    ("scalar") or log σ ("log"). With normalize_obs every used vector group has its own normalizer
    (shared by actor and critic when both read the group). Image groups (cfg.image_obs_groups) go
    through a CNN (canter.rl.encoders.ImageEncoder), one per group shared by actor and critic or one
    each (cfg.cnn.shared), and are never normalized.

    observation_shapes: the env's groups, name -> (dim,). num_actions: action dimension.
    init_generator: a CPU generator the initial parameters are drawn from.
    """

    is_recurrent = False

    def __init__(
        self,
        observation_shapes: Mapping[str, tuple[int, ...]],
        num_actions: int,
        cfg: PolicyCfg,
        *,
        init_generator: torch.Generator,
    ) -> None:
        super().__init__()
        self.cfg = cfg
        self.num_actions = int(num_actions)
        self.actor_obs_groups, self.critic_obs_groups = resolve_obs_groups(observation_shapes, cfg)
        used = dict.fromkeys(self.actor_obs_groups + self.critic_obs_groups)
        self.observation_shapes = {g: tuple(observation_shapes[g]) for g in used}
        self.image_groups = tuple(g for g in self.observation_shapes if g in cfg.image_obs_groups)
        self.normalizers = nn.ModuleDict(
            {
                group: EmpiricalNormalizer(shape) if cfg.normalize_obs and group not in self.image_groups
                else nn.Identity()
                for group, shape in self.observation_shapes.items()
            }
        )
        self.encoders = nn.ModuleDict()
        for role, groups in (("actor", self.actor_obs_groups), ("critic", self.critic_obs_groups)):
            for group in groups:
                key = self._encoder_key(role, group)
                if group in self.image_groups and key not in self.encoders:
                    self.encoders[key] = ImageEncoder(self.observation_shapes[group], cfg.cnn, generator=init_generator)
        actor_input_dim = self._feature_dim(self.actor_obs_groups)
        critic_input_dim = self._feature_dim(self.critic_obs_groups)
        self.actor = build_mlp(
            actor_input_dim,
            cfg.actor_hidden_dims,
            self.num_actions,
            cfg.activation,
            output_gain=0.01,
            generator=init_generator,
        )
        self.critic = build_mlp(
            critic_input_dim,
            cfg.critic_hidden_dims,
            1,
            cfg.activation,
            output_gain=1.0,
            generator=init_generator,
        )
        # actor and critic read the same features (same groups, one CNN per image group): encode once
        self.shared_features = self.actor_obs_groups == self.critic_obs_groups and (cfg.cnn.shared or not self.image_groups)
        self.discrete = cfg.distribution == "categorical"
        if not self.discrete:
            initial_std = torch.full((self.num_actions,), float(cfg.init_noise_std))
            if cfg.noise_std_type == "log":
                self.log_std = nn.Parameter(torch.log(initial_std))
            else:
                self.std = nn.Parameter(initial_std)

    def _encoder_key(self, role: str, group: str) -> str:
        return group if self.cfg.cnn.shared else f"{role}:{group}"

    def _feature_dim(self, groups: tuple[str, ...]) -> int:
        """Input width of the MLP reading `groups` (the recurrent subclass returns its memory size)."""
        return sum(self.cfg.cnn.output_dim if g in self.image_groups else self.observation_shapes[g][0] for g in groups)

    # --- observations -------------------------------------------------------------------------------

    def encode(self, obs: Observations, groups: tuple[str, ...], role: str = "actor") -> torch.Tensor:
        """Groups in order, vector groups normalized and image groups through the CNN of `role`
        ("actor" or "critic"), concatenated: (..., dim_g) or (..., C, H, W) each -> (..., Σ features_g)."""
        features = [
            self.encoders[self._encoder_key(role, g)](obs[g]) if g in self.image_groups else self.normalizers[g](obs[g])
            for g in groups
        ]
        return torch.cat(features, dim=-1)

    def update_normalization(self, obs: Observations) -> None:
        """Feeds the used groups (num_envs, dim) to their normalizers (no-op in eval mode / disabled);
        under torch.distributed the statistics merge every rank's samples (canter.rl.distributed)."""
        update_normalizers(self.normalizers, obs)

    # --- distribution and value heads ----------------------------------------------------------------

    def action_std(self, like: torch.Tensor) -> torch.Tensor:
        """σ broadcast to the shape of `like` (..., num_actions); zeros for a categorical policy."""
        if self.discrete:
            return torch.zeros_like(like)
        std = torch.exp(self.log_std) if self.cfg.noise_std_type == "log" else self.std
        return std.expand_as(like)

    def distribution_from_features(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(mean, std), each (..., num_actions), from actor features (..., actor_input_dim); for a
        categorical policy (logits, zeros)."""
        mean = self.actor(features)
        return mean, self.action_std(mean)

    def log_prob(self, actions: torch.Tensor, mean: torch.Tensor, std: torch.Tensor) -> torch.Tensor:
        """log π(a|s): (..., A) x3 -> (...)."""
        return categorical_log_prob(actions, mean) if self.discrete else gaussian_log_prob(actions, mean, std)

    def entropy(self, mean: torch.Tensor, std: torch.Tensor) -> torch.Tensor:
        """Entropy of the action distribution: (..., A) x2 -> (...)."""
        return categorical_entropy(mean) if self.discrete else gaussian_entropy(std)

    def kl(self, old_mean: torch.Tensor, old_std: torch.Tensor, mean: torch.Tensor, std: torch.Tensor) -> torch.Tensor:
        """KL(π_old ‖ π) per sample: (..., A) x4 -> (...)."""
        return categorical_kl(old_mean, mean) if self.discrete else gaussian_kl(old_mean, old_std, mean, std)

    # --- rollout interface ----------------------------------------------------------------------------

    def action_distribution(self, obs: Observations) -> tuple[torch.Tensor, torch.Tensor]:
        """(mean, std), each (num_envs, num_actions)."""
        return self.distribution_from_features(self.encode(obs, self.actor_obs_groups))

    def act(self, obs: Observations, generator: torch.Generator) -> PolicyStep:
        """Samples actions a ~ N(μ(s), σ²) (categorical: a one-hot a ~ softmax(logits)) with noise from
        `generator` (on the obs device)."""
        mean, std = self.action_distribution(obs)
        actions = self.sample(mean, std, generator)
        return PolicyStep(actions, self.log_prob(actions, mean, std), mean, std)

    def sample(self, mean: torch.Tensor, std: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        """Actions drawn from the distribution (mean, std) with noise from `generator`: Gaussian, or
        one-hot rows from softmax(mean) for a categorical policy."""
        return categorical_sample(mean, generator) if self.discrete else gaussian_sample(mean, std, generator)

    def act_and_evaluate(self, obs: Observations, generator: torch.Generator) -> tuple[PolicyStep, torch.Tensor]:
        """act(obs) and evaluate(obs) of the same observations, encoding them once where actor and
        critic share their features."""
        if not self.shared_features:
            return self.act(obs, generator), self.evaluate(obs)
        features = self.encode(obs, self.actor_obs_groups)
        mean, std = self.distribution_from_features(features)
        actions = self.sample(mean, std, generator)
        return PolicyStep(actions, self.log_prob(actions, mean, std), mean, std), self.critic(features).squeeze(-1)

    def act_inference(self, obs: Observations) -> torch.Tensor:
        """The deterministic action μ(s): (num_envs, num_actions) (categorical: the logits, whose
        argmax the env takes)."""
        return self.action_distribution(obs)[0]

    def evaluate(self, obs: Observations, *, advance_memory: bool = True) -> torch.Tensor:
        """V(s): (num_envs,). advance_memory only matters for recurrent critics."""
        return self.critic(self.encode(obs, self.critic_obs_groups, "critic")).squeeze(-1)

    def reset(self, dones: torch.Tensor) -> None:
        """Forgets the memory of envs whose episode ended (dones: (num_envs,) bool). Stateless here."""

    def hidden_states(self, batch_size: int | None = None) -> tuple[HiddenState, HiddenState] | None:
        """(actor, critic) recurrent states; None for a feed-forward policy."""
        return None

    def set_hidden_states(self, actor_state: HiddenState, critic_state: HiddenState) -> None:
        """Restores states returned by `hidden_states` (e.g. from a checkpoint). Stateless here."""

    # --- training interface ---------------------------------------------------------------------------

    def forward_train(
        self,
        obs: Observations,
        episode_starts: torch.Tensor | None = None,
        actor_state: HiddenState | None = None,
        critic_state: HiddenState | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(mean (B, A), std (B, A), values (B,)) for a minibatch of observations (B, dim) per group.

        The recurrent arguments are ignored here (see ActorCriticRecurrent.forward_train).
        """
        if self.shared_features:
            features = self.encode(obs, self.actor_obs_groups)
            mean, std = self.distribution_from_features(features)
            return mean, std, self.critic(features).squeeze(-1)
        mean, std = self.action_distribution(obs)
        return mean, std, self.evaluate(obs)
