"""The loss terms and the learning-rate rule as pure tensor functions (torch.compile-friendly).

Every per-sample tensor is (batch,); every loss is a () tensor to be minimized.
"""

from __future__ import annotations

import torch


def clipped_surrogate_loss(
    log_prob: torch.Tensor, old_log_prob: torch.Tensor, advantages: torch.Tensor, clip_param: float
) -> torch.Tensor:
    """PPO policy loss: E[max(-A·ρ, -A·clip(ρ, 1-ε, 1+ε))] with ρ = π(a|s)/π_old(a|s)."""
    ratio = torch.exp(log_prob - old_log_prob)
    unclipped = -advantages * ratio
    clipped = -advantages * ratio.clamp(1.0 - clip_param, 1.0 + clip_param)
    return torch.maximum(unclipped, clipped).mean()


def value_loss(
    values: torch.Tensor,
    old_values: torch.Tensor,
    returns: torch.Tensor,
    clip_param: float,
    use_clipped_value_loss: bool,
) -> torch.Tensor:
    """E[(R - V)²], or with clipping E[max((R - V)², (R - V_old - clip(V - V_old, -ε, ε))²)]."""
    unclipped = (returns - values).square()
    if not use_clipped_value_loss:
        return unclipped.mean()
    values_clipped = old_values + (values - old_values).clamp(-clip_param, clip_param)
    clipped = (returns - values_clipped).square()
    return torch.maximum(unclipped, clipped).mean()


def policy_gradient_loss(log_prob: torch.Tensor, advantages: torch.Tensor) -> torch.Tensor:
    """A2C policy loss: -E[A·log π(a|s)] (advantages are constants)."""
    return -(advantages.detach() * log_prob).mean()


def bounds_loss(mean: torch.Tensor, bound: float) -> torch.Tensor:
    """Penalty on Gaussian action means outside [-bound, bound]: E[Σ_a max(|μ_a| - bound, 0)²] over
    the leading (sample) dimensions of mean (..., A). Zero, with zero gradient, inside the bounds."""
    return (mean.abs() - bound).clamp(min=0.0).square().sum(-1).mean()


def linear_learning_rate(initial: float, final: float, progress: float) -> float:
    """The linearly annealed step size after `progress` of the budget (clamped to [0, 1])."""
    return initial + (final - initial) * min(max(progress, 0.0), 1.0)


def adaptive_learning_rate(
    learning_rate: torch.Tensor,
    kl: torch.Tensor,
    desired_kl: float,
    min_learning_rate: float,
    max_learning_rate: float,
) -> torch.Tensor:
    """The KL-adaptive step size, as a tensor (no host sync).

    lr ← lr/1.5 if KL > 2·KL*;  lr ← lr·1.5 if 0 < KL < KL*/2;  then clamped to [min, max].
    """
    too_far = kl > 2.0 * desired_kl
    too_close = (kl < 0.5 * desired_kl) & (kl > 0.0)
    factor = torch.where(too_far, 1.0 / 1.5, torch.where(too_close, 1.5, 1.0))
    return (learning_rate * factor).clamp(min_learning_rate, max_learning_rate)
