"""Symmetry augmentation and the mirror loss (the robot's left-right mirror, as rsl_rl and the
legged-robot literature use it): a walking policy should do on its left what it does on its right.

The env supplies linear maps (canter.core.mirror.Mirror): y = x[..., index] * sign, one per
observation group and one for the actions. Pure tensor functions; no host synchronization.
"""

from __future__ import annotations

from collections.abc import Mapping

import torch

from canter.core.mirror import Mirror, mirror
from canter.rl.storage import MiniBatch


def augment(batch: MiniBatch, observations: Mapping[str, Mirror], actions: Mirror) -> MiniBatch:
    """The minibatch followed by its mirror image (2B rows): mirrored observations of every group,
    mirrored actions and old action means, old stds permuted (no sign), and the same old
    log-probabilities, values, returns and advantages (a mirrored state is worth what the state is
    worth, and a symmetric policy gives the mirrored action the same probability)."""

    def twice(x: torch.Tensor) -> torch.Tensor:
        return torch.cat((x, x))

    return MiniBatch(
        observations={name: torch.cat((x, mirror(x, observations[name]))) for name, x in batch.observations.items()},
        actions=torch.cat((batch.actions, mirror(batch.actions, actions))),
        old_log_prob=twice(batch.old_log_prob),
        old_mean=torch.cat((batch.old_mean, mirror(batch.old_mean, actions))),
        old_std=torch.cat((batch.old_std, batch.old_std.index_select(-1, actions.index))),
        old_values=twice(batch.old_values),
        returns=twice(batch.returns),
        advantages=twice(batch.advantages),
    )


def mirror_loss(mean: torch.Tensor, mirrored_mean: torch.Tensor, actions: Mirror) -> torch.Tensor:
    """E|π(mirror(s)) - mirror(π(s))|², the target mirror(π(s)) held fixed: (B, A) means -> ()."""
    return (mirrored_mean - mirror(mean.detach(), actions)).square().sum(dim=-1).mean()


def first_rows(batch: MiniBatch, size: int) -> MiniBatch:
    """The first `size` rows of a flat minibatch (the collected half of an augmented one)."""
    return MiniBatch(
        observations={name: x[:size] for name, x in batch.observations.items()},
        actions=batch.actions[:size],
        old_log_prob=batch.old_log_prob[:size],
        old_mean=batch.old_mean[:size],
        old_std=batch.old_std[:size],
        old_values=batch.old_values[:size],
        returns=batch.returns[:size],
        advantages=batch.advantages[:size],
    )
