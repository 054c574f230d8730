"""Running mean/variance normalization of an observation group."""

from __future__ import annotations

import torch
from torch import nn


class EmpiricalNormalizer(nn.Module):
    """Normalizes x to (x - mean) / sqrt(var + epsilon), clipped to [-clip, clip].

    mean and var are the population statistics of every sample passed to `update` so far, merged
    batch by batch with the parallel-variance formula (Chan et al.), so they equal the statistics of
    all data seen at once. They live in buffers (saved in state_dict, moved by .to()). `update` does
    nothing in eval mode, so a played or exported policy keeps its statistics frozen.

    shape: the feature shape of one sample, e.g. (obs_dim,).
    epsilon: added to the variance so that constant features do not divide by zero.
    clip: bound of the normalized value (None: no clipping).
    """

    def __init__(self, shape: tuple[int, ...], epsilon: float = 1e-4, clip: float | None = 10.0) -> None:
        super().__init__()
        self.shape = tuple(shape)
        self.epsilon = float(epsilon)
        self.clip = clip
        self.register_buffer("mean", torch.zeros(self.shape))
        self.register_buffer("var", torch.ones(self.shape))
        self.register_buffer("count", torch.zeros((), dtype=torch.int64))
        self.mean: torch.Tensor
        self.var: torch.Tensor
        self.count: torch.Tensor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x: (..., *shape) -> normalized x of the same shape."""
        normalized = (x - self.mean) / torch.sqrt(self.var + self.epsilon)
        if self.clip is not None:
            normalized = normalized.clamp(-self.clip, self.clip)
        return normalized

    @torch.no_grad()
    def update(self, x: torch.Tensor) -> None:
        """Merges the samples x: (..., *shape) into the running statistics (training mode only)."""
        if not self.training:
            return
        count, mean, var = self.moments(x)
        if count == 0:
            return
        self.merge(count, mean, var)

    def moments(self, x: torch.Tensor) -> tuple[int, torch.Tensor, torch.Tensor]:
        """(count, mean `shape`, population var `shape`) of the samples x: (..., *shape)."""
        samples = x.reshape(-1, *self.shape).to(self.mean.dtype)
        return samples.shape[0], samples.mean(dim=0), samples.var(dim=0, unbiased=False)

    @torch.no_grad()
    def merge(self, batch_count: int | torch.Tensor, batch_mean: torch.Tensor, batch_var: torch.Tensor) -> None:
        """Merges the moments of a batch (count > 0; an int or a () int64 tensor) into the running
        statistics; torch.distributed merges every rank's batch this way, in rank order."""
        total = self.count + batch_count
        if isinstance(batch_count, torch.Tensor):
            batch_count = batch_count.to(self.mean.dtype)
        # n_b/n written as (1/n)·n_b: exactly what `int / tensor` computes, for ints and tensors alike
        batch_fraction = torch.reciprocal(total.to(self.mean.dtype)) * batch_count
        delta = batch_mean - self.mean
        # mean ← mean + δ·n_b/n
        new_mean = self.mean + delta * batch_fraction
        # M2 = var·n_a + var_b·n_b + δ²·n_a·n_b/n ;  var ← M2/n = var·(1-f) + var_b·f + δ²·f·(1-f)
        new_var = (
            self.var * (1.0 - batch_fraction)
            + batch_var * batch_fraction
            + delta.square() * batch_fraction * (1.0 - batch_fraction)
        )
        self.mean.copy_(new_mean)
        self.var.copy_(new_var)
        self.count.copy_(total)

    def export_affine(self) -> tuple[torch.Tensor, torch.Tensor]:
        """(mean, std) such that forward(x) == clamp((x - mean) / std, -clip, clip), each `shape`.

        Folding them into the first layer of an exported policy removes the normalizer; the clip
        (attribute `clip`) has to be kept as a clamp in front of that layer when it is not None.
        """
        return self.mean.clone(), torch.sqrt(self.var + self.epsilon)

    def extra_repr(self) -> str:
        return f"shape={self.shape}, epsilon={self.epsilon}, clip={self.clip}"
