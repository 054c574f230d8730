"""Proximal Policy Optimization (Schulman et al., 2017) with the clipped surrogate objective.

One iteration:
1. Rollout (OnPolicyAlgorithm): `act` samples a ~ N(μ(s), σ²) and records s, a, log π(a|s), μ, σ, V(s);
   `process_env_step` records the reward (time-outs bootstrapped with γ·V(s)) and the episode flags.
2. `compute_returns` runs GAE(γ, λ) over the rollout, bootstrapped with V of the last observation.
3. `update`: num_learning_epochs passes over the rollout, each split into num_mini_batches shuffled
   minibatches (whole env sequences for recurrent policies). Per minibatch:
     - KL(π_old ‖ π) sets the learning rate of this step (adaptive schedule),
     - with cfg.symmetry "augment"/"both", the minibatch is extended by its mirror image, and with
       "loss"/"both" the mirror loss c_s·E|π(mirror(s)) - mirror(π(s))|² is added (canter.rl.symmetry),
     - loss = clipped surrogate + c_v·(clipped) value loss - c_e·entropy (+ c_b·the bound loss on
       the Gaussian means when cfg.bounds_loss_coef asks for it),
     - backward, gradient all-reduce (distributed only), global norm clip, Adam step.

No host synchronization: the learning rate is a device tensor shared with the optimizer, and the
returned statistics are () tensors the runner reads once per iteration.
"""

from __future__ import annotations

import torch

from canter.rl.algorithm import OnPolicyAlgorithm
from canter.rl.gae import normalize_advantages
from canter.rl.losses import bounds_loss, clipped_surrogate_loss, value_loss
from canter.rl.storage import MiniBatch
from canter.rl.symmetry import augment, first_rows, mirror_loss

STAT_NAMES = ("surrogate_loss", "value_loss", "entropy", "kl", "grad_norm")


class PPO(OnPolicyAlgorithm):
    """PPO on an ActorCritic. Constructor: see OnPolicyAlgorithm(policy, cfg, *, num_envs, device,
    generator); cfg.algo must be "ppo"."""

    algo_name = "ppo"

    def update(self) -> dict[str, torch.Tensor]:
        """Learns from the stored rollout and clears it.

        Returns () tensors: the means over all minibatch steps of surrogate_loss, value_loss, entropy,
        kl (old ‖ new, measured before each step) and grad_norm (before clipping), plus the
        learning_rate after the update.
        """
        cfg = self.cfg
        names = (*STAT_NAMES, "symmetry_loss") if cfg.symmetry in ("loss", "both") else STAT_NAMES
        if self.bounds_coef:
            names = (*names, "bounds_loss")
        totals = {name: torch.zeros((), device=self.device) for name in names}
        if self.decoupled:  # overlap: the rollout comes from the policy one update behind
            self.decouple_from_behaviour()
        for batch in self._mini_batches(cfg.num_mini_batches, cfg.num_learning_epochs):
            for name, value in self._learn(batch).items():
                totals[name] += value
        self.storage.clear()
        num_steps = cfg.num_learning_epochs * cfg.num_mini_batches
        stats = {name: total / num_steps for name, total in totals.items()}
        stats["learning_rate"] = self.learning_rate.detach().clone()
        return stats

    def _learn_step(self, batch: MiniBatch) -> dict[str, torch.Tensor]:
        """One gradient step on one minibatch; returns its statistics as detached () tensors."""
        cfg = self.cfg
        size = batch.actions.shape[0]
        mirrors = self.symmetry if cfg.symmetry != "off" else None
        if mirrors is not None:  # rows size.. are the mirror images of rows ..size
            batch = augment(batch, *mirrors)
        mean, std, values = self._forward(batch)

        # How far the policy moved from the one that collected the data, before this step (measured
        # on the collected samples only).
        kl = self._adapt_learning_rate(batch._replace(old_mean=batch.old_mean[:size], old_std=batch.old_std[:size]),
                                       mean[:size], std[:size])
        symmetry_loss = None
        if mirrors is not None and cfg.symmetry in ("loss", "both"):
            symmetry_loss = mirror_loss(mean[:size], mean[size:], mirrors[1])
        if cfg.symmetry == "loss":  # the PPO terms on the collected samples only
            batch = first_rows(batch, size)
            mean, std, values = mean[:size], std[:size], values[:size]
        advantages = batch.advantages
        if cfg.normalize_advantage_per_mini_batch:
            advantages = normalize_advantages(advantages)

        log_prob = self.policy.log_prob(batch.actions, mean, std)
        surrogate = clipped_surrogate_loss(log_prob, batch.old_log_prob, advantages, cfg.clip_param)
        value = value_loss(
            values, batch.old_values, batch.returns, cfg.clip_param, cfg.use_clipped_value_loss
        )
        entropy = self.policy.entropy(mean, std).mean()
        loss = surrogate + cfg.value_loss_coef * value - cfg.entropy_coef * entropy
        if symmetry_loss is not None:
            loss = loss + cfg.symmetry_loss_coef * symmetry_loss
        bounds = bounds_loss(mean, cfg.action_bound) if self.bounds_coef else None
        if bounds is not None:
            loss = loss + self.bounds_coef * bounds

        grad_norm = self._gradient_step(loss)
        stats = {
            "surrogate_loss": surrogate.detach(),
            "value_loss": value.detach(),
            "entropy": entropy.detach(),
            "kl": kl,
            "grad_norm": grad_norm,
        }
        if symmetry_loss is not None:
            stats["symmetry_loss"] = symmetry_loss.detach()
        if bounds is not None:
            stats["bounds_loss"] = bounds.detach()
        return stats
