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
