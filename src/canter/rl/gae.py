"""Generalized advantage estimation as pure tensor functions.

Rollout tensors are (num_steps, num_envs), time-major; step t holds the transition s_t → s_{t+1}.
Because envs reset inside `step()`, the observation returned after a terminated or truncated step is the
first one of a new episode, so the value of s_{t+1} must never be used across that boundary.

- terminated (a terminal state): the future is worth 0, no bootstrap.
- truncated (a time-out): the future is worth V(s_{t+1}) of the true last state, which we no longer
  have. We use the value of the observation at the truncated step itself, V(s_t), already computed
  during the rollout (the rsl_rl approximation; exact when V changes little over one step), and fold
  γ·V(s_t) into the reward of that step. After that the time-out is an ordinary episode end.
"""

from __future__ import annotations

import torch


def bootstrap_time_outs(
    rewards: torch.Tensor, values: torch.Tensor, truncated: torch.Tensor, gamma: float
) -> torch.Tensor:
    """Rewards with the time-out bootstrap added. All (num_envs,) (or any common shape).

    values: V(s_t) of the observation the action was taken in; truncated: bool.
    """
    # r_t ← r_t + γ·V(s_t)·truncated_t
    return rewards + gamma * values * truncated.to(rewards.dtype)


def compute_gae(
    rewards: torch.Tensor,
    values: torch.Tensor,
    dones: torch.Tensor,
    last_values: torch.Tensor,
    gamma: float,
    lam: float,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Returns and advantages, each (num_steps, num_envs).

    rewards: (T, N), already including the time-out bootstrap (see `bootstrap_time_outs`).
    values: (T, N) V(s_t) from the rollout. dones: (T, N) bool, terminated | truncated.
    last_values: (N,) V(s_T) of the observation after the last step.
    """
    num_steps = rewards.shape[0]
    advantages = torch.empty_like(rewards)
    next_advantage = torch.zeros_like(last_values)
    next_values = last_values
    for t in reversed(range(num_steps)):
        # m_t = 1 - done_t : 0 where the episode ended at step t
        next_is_not_terminal = 1.0 - dones[t].to(rewards.dtype)
        # δ_t = r_t + γ·m_t·V(s_{t+1}) - V(s_t)
        delta = rewards[t] + gamma * next_is_not_terminal * next_values - values[t]
        # A_t = δ_t + γ·λ·m_t·A_{t+1}
        next_advantage = delta + gamma * lam * next_is_not_terminal * next_advantage
        advantages[t] = next_advantage
        next_values = values[t]
    # R_t = A_t + V(s_t)  (the λ-return, target of the value function)
    returns = advantages + values
    return returns, advantages


def normalize_advantages(advantages: torch.Tensor, epsilon: float = 1e-8) -> torch.Tensor:
    """Â = (A - mean(A)) / (std(A) + ε) over all elements (a rollout or a minibatch)."""
    return (advantages - advantages.mean()) / (advantages.std() + epsilon)
