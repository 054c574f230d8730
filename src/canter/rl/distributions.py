"""Diagonal Gaussian policy distribution as pure tensor functions (no torch.distributions objects).

mean, std: (..., num_actions); every function reduces over the last (action) dimension.
"""

from __future__ import annotations

import math

import torch


def gaussian_sample(mean: torch.Tensor, std: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """a = μ + σ·ε with ε ~ N(0, I) drawn from `generator` (on mean's device). Returns (..., A)."""
    noise = torch.randn(mean.shape, generator=generator, device=mean.device, dtype=mean.dtype)
    return mean + std * noise


def gaussian_log_prob(actions: torch.Tensor, mean: torch.Tensor, std: torch.Tensor) -> torch.Tensor:
    """log π(a) = Σ_i [-(a_i-μ_i)²/(2σ_i²) - log σ_i - ½·log 2π]. Returns (...)."""
    half_log_two_pi = 0.5 * math.log(2.0 * math.pi)
    z = (actions - mean) / std
    return (-0.5 * z.square() - torch.log(std) - half_log_two_pi).sum(dim=-1)


def gaussian_entropy(std: torch.Tensor) -> torch.Tensor:
    """H = Σ_i [½ + ½·log 2π + log σ_i]. Returns (...)."""
    half_log_two_pi = 0.5 * math.log(2.0 * math.pi)
    return (0.5 + half_log_two_pi + torch.log(std)).sum(dim=-1)


def gaussian_kl(
    old_mean: torch.Tensor, old_std: torch.Tensor, new_mean: torch.Tensor, new_std: torch.Tensor
) -> torch.Tensor:
    """KL(old ‖ new) = Σ_i [log(σ'_i/σ_i) + (σ_i² + (μ_i-μ'_i)²)/(2σ'_i²) - ½]. Returns (...)."""
    return (
        torch.log(new_std / old_std)
        + (old_std.square() + (old_mean - new_mean).square()) / (2.0 * new_std.square())
        - 0.5
    ).sum(dim=-1)


# --- categorical (discrete actions) ---------------------------------------------------------------
# A discrete action is carried as a one-hot row (..., n) so that storage, minibatches and the env
# protocol keep one (num_envs, num_actions) float layout for both kinds; the policy's "mean" slot holds
# the logits (..., n) and its "std" slot is unused (zeros). The env takes argmax of what it is given, so
# the deterministic action (the logits themselves) is the most likely choice.


def categorical_sample(logits: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """One-hot a ~ softmax(logits) by the Gumbel-max trick, noise from `generator`: (..., n)."""
    uniform = torch.rand(logits.shape, generator=generator, device=logits.device, dtype=logits.dtype)
    gumbel = -torch.log(-torch.log(uniform.clamp(1e-20, 1.0 - 1e-7)))
    choice = (logits + gumbel).argmax(dim=-1, keepdim=True)
    return torch.zeros_like(logits).scatter_(-1, choice, 1.0)


def categorical_log_prob(actions: torch.Tensor, logits: torch.Tensor) -> torch.Tensor:
    """log π(a) = Σ_i a_i · log softmax(logits)_i for one-hot a: (..., n) -> (...)."""
    return (actions * torch.log_softmax(logits, dim=-1)).sum(dim=-1)


def categorical_entropy(logits: torch.Tensor) -> torch.Tensor:
    """H = -Σ_i p_i log p_i with p = softmax(logits): (..., n) -> (...)."""
    log_p = torch.log_softmax(logits, dim=-1)
    return -(log_p.exp() * log_p).sum(dim=-1)


def categorical_kl(old_logits: torch.Tensor, new_logits: torch.Tensor) -> torch.Tensor:
    """KL(old ‖ new) = Σ_i p_i (log p_i − log q_i): (..., n) -> (...)."""
    old_log_p = torch.log_softmax(old_logits, dim=-1)
    return (old_log_p.exp() * (old_log_p - torch.log_softmax(new_logits, dim=-1))).sum(dim=-1)
