"""A linear left-right mirror of a tensor's last dimension, shared by the env (which builds it from
the task's declarations, canter.managers.symmetry) and the learner (canter.rl.symmetry)."""

from __future__ import annotations

from typing import NamedTuple

import torch


class Mirror(NamedTuple):
    """y = x[..., index] * sign: index (dim,) long, sign (dim,) float32, on the env's device."""

    index: torch.Tensor
    sign: torch.Tensor


def mirror(x: torch.Tensor, m: Mirror) -> torch.Tensor:
    """x[..., index] * sign."""
    return x.index_select(-1, m.index).mul(m.sign.to(x.dtype))
