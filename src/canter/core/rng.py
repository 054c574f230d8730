"""Explicit random number generators. Nothing in Canter touches the global RNGs."""

from __future__ import annotations

import numpy as np
import torch


def make_generator(seed: int, device: torch.device | str) -> torch.Generator:
    """A torch.Generator on `device` seeded with `seed`."""
    generator = torch.Generator(device=device)
    generator.manual_seed(int(seed))
    return generator


def derive_seed(seed: int, *keys: int) -> int:
    """A deterministic child seed from a base seed and integer keys (e.g. rank, purpose)."""
    sequence = np.random.SeedSequence([int(seed), *[int(k) for k in keys]])
    return int(sequence.generate_state(1, dtype=np.uint64)[0] % (2**63 - 1))


def uniform(
    low: float | torch.Tensor,
    high: float | torch.Tensor,
    shape: tuple[int, ...],
    generator: torch.Generator,
    device: torch.device,
    dtype: torch.dtype = torch.float32,
) -> torch.Tensor:
    """Samples U(low, high) of `shape` drawn from `generator`."""
    sample = torch.rand(shape, generator=generator, device=device, dtype=dtype)
    return low + (high - low) * sample
