"""Synchronous batched advantage actor-critic (A2C, Mnih et al., 2016, without the asynchrony).

Same rollout as PPO (OnPolicyAlgorithm); the targets are GAE(γ, λ) returns, which with λ = 1 are the
n-step returns of the rollout bootstrapped with V of the last observation. `update` takes ONE gradient
step on the whole rollout:
    loss = -E[A·log π(a|s)] + c_v·E[(R - V(s))²] - c_e·E[H(π(·|s))] (+ c_b·the bound loss on Gaussian
    means, AlgoCfg.bounds_loss_coef: 0.01 by default for A2C)
num_learning_epochs, num_mini_batches, clip_param and use_clipped_value_loss are ignored. With the
adaptive schedule the KL of the step just taken (one extra forward pass, no gradient) sets the
learning rate of the next update.
"""

from __future__ import annotations

import torch

from canter.rl.algorithm import OnPolicyAlgorithm
from canter.rl.gae import normalize_advantages
from canter.rl.losses import bounds_loss, policy_gradient_loss, value_loss
from canter.rl.storage import MiniBatch


class A2C(OnPolicyAlgorithm):
    """A2C on an ActorCritic. Constructor: see OnPolicyAlgorithm(policy, cfg, *, num_envs, device,
    generator); cfg.algo must be "a2c"."""

    algo_name = "a2c"

    def update(self) -> dict[str, torch.Tensor]:
        """One gradient step on the stored rollout, which is then cleared.

        Returns () tensors: policy_loss, value_loss, entropy, kl (old ‖ new after the step),
        grad_norm (before clipping) and learning_rate (for the next update).
        """
        batch = next(iter(self._mini_batches(num_mini_batches=1, num_epochs=1)))
        stats = {name: value.clone() for name, value in self._learn(batch).items()}  # (graph outputs are reused)
        self.storage.clear()
        stats["learning_rate"] = self.learning_rate.detach().clone()
        return stats

    def _learn_step(self, batch: MiniBatch) -> dict[str, torch.Tensor]:
        cfg = self.cfg
        mean, std, values = self._forward(batch)
        advantages = batch.advantages
        if cfg.normalize_advantage_per_mini_batch:
            advantages = normalize_advantages(advantages)

        log_prob = self.policy.log_prob(batch.actions, mean, std)
        policy_loss = policy_gradient_loss(log_prob, advantages)
        value = value_loss(values, batch.old_values, batch.returns, cfg.clip_param, False)
        entropy = self.policy.entropy(mean, std).mean()
        loss = policy_loss + cfg.value_loss_coef * value - cfg.entropy_coef * entropy
        bounds = bounds_loss(mean, cfg.action_bound) if self.bounds_coef else None
        if bounds is not None:
            loss = loss + self.bounds_coef * bounds
        grad_norm = self._gradient_step(loss)

        with torch.no_grad():
            new_mean, new_std, _ = self._forward(batch)
        kl = self._adapt_learning_rate(batch, new_mean, new_std)
        stats = {
            "policy_loss": policy_loss.detach(),
            "value_loss": value.detach(),
            "entropy": entropy.detach(),
            "kl": kl,
            "grad_norm": grad_norm,
        }
        if bounds is not None:
            stats["bounds_loss"] = bounds.detach()
        return stats
