"""V-trace (Espeholt et al. 2018, IMPALA): off-policy corrected value targets and policy-gradient
advantages for experience collected by a behaviour policy μ that lags behind the learner's π, as
GA3C's predictors do (canter.rl.ga3c). Pure tensor functions over (T, B) time-major batches.

With ρ_t = min(ρ̄, π(a_t|x_t)/μ(a_t|x_t)) and c_t = λ·min(c̄, π/μ):
    δ_t = ρ_t (r_t + γ_t V(x_{t+1}) − V(x_t)),   γ_t = γ·(1 − done_t)
    v_t = V(x_t) + δ_t + γ_t c_t (v_{t+1} − V(x_{t+1})),   v_T = V(x_T) (the bootstrap)
    A_t = ρ_t (r_t + γ_t v_{t+1} − V(x_t))   (the policy-gradient advantage)
When π = μ (no lag) and ρ̄, c̄ ≥ 1, λ = 1, v_t are the n-step returns and A_t the n-step advantages
of synchronous A2C.
"""

from __future__ import annotations

import torch


def vtrace(
    behaviour_log_prob: torch.Tensor,
    target_log_prob: torch.Tensor,
    rewards: torch.Tensor,
    values: torch.Tensor,
    bootstrap_value: torch.Tensor,
    dones: torch.Tensor,
    gamma: float,
    rho_bar: float = 1.0,
    c_bar: float = 1.0,
    lam: float = 1.0,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(v (T, B) value targets, A (T, B) policy-gradient advantages, ρ (T, B) clipped weights).

    behaviour_log_prob, target_log_prob: log μ(a_t|x_t), log π(a_t|x_t); rewards, values V(x_t), dones:
    (T, B) (dones bool: the episode ended after step t, so nothing is bootstrapped across it);
    bootstrap_value: (B,) V(x_T). Everything is computed without gradient (targets are constants)."""
    with torch.no_grad():
        ratio = torch.exp(target_log_prob - behaviour_log_prob)
        rho = ratio.clamp(max=rho_bar)
        c = lam * ratio.clamp(max=c_bar)
        discount = gamma * (~dones).to(values.dtype)
        next_values = torch.cat([values[1:], bootstrap_value[None]], dim=0)
        delta = rho * (rewards + discount * next_values - values)
        corrections = torch.zeros_like(values)
        acc = torch.zeros_like(bootstrap_value)
        for t in range(values.shape[0] - 1, -1, -1):
            # v_t − V(x_t) = δ_t + γ_t c_t (v_{t+1} − V(x_{t+1}))
            acc = delta[t] + discount[t] * c[t] * acc
            corrections[t] = acc
        targets = values + corrections
        next_targets = torch.cat([targets[1:], bootstrap_value[None]], dim=0)
        advantages = rho * (rewards + discount * next_targets - values)
    return targets, advantages, rho


def importance_weighted_a2c_loss(
    target_log_prob: torch.Tensor,
    values: torch.Tensor,
    entropy: torch.Tensor,
    targets: torch.Tensor,
    advantages: torch.Tensor,
    value_loss_coef: float,
    entropy_coef: float,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """(loss, policy loss, value loss, entropy) of an A2C step on V-trace targets:
    −E[A_t log π(a_t|x_t)] + c_v·E[(v_t − V(x_t))²] − c_e·E[H(π(·|x_t))] (A_t and v_t constants)."""
    policy_loss = -(advantages.detach() * target_log_prob).mean()
    value_loss = (targets.detach() - values).square().mean()
    mean_entropy = entropy.mean()
    loss = policy_loss + value_loss_coef * value_loss - entropy_coef * mean_entropy
    return loss, policy_loss, value_loss, mean_entropy
