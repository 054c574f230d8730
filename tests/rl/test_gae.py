"""GAE by hand: 3 steps, 2 envs, one terminated and one timed-out step, γ = λ = 0.5."""

from __future__ import annotations

import torch

from canter.rl.gae import bootstrap_time_outs, compute_gae, normalize_advantages

GAMMA = 0.5
LAM = 0.5


def test_gae_hand_computed_with_termination_and_time_out():
    # rows: steps t = 0, 1, 2; columns: env 0, env 1
    rewards = torch.tensor([[1.0, 1.0], [2.0, 1.0], [3.0, 1.0]])
    values = torch.tensor([[0.5, 2.0], [1.0, 4.0], [2.0, 1.0]])
    terminated = torch.tensor([[False, False], [True, False], [False, False]])  # env 0 ends at t=1
    truncated = torch.tensor([[False, True], [False, False], [False, False]])  # env 1 times out at t=0
    last_values = torch.tensor([4.0, 2.0])

    rewards = bootstrap_time_outs(rewards, values, truncated, GAMMA)
    # env 1, t=0: r = 1 + γ·V(s_0) = 1 + 0.5·2 = 2
    assert torch.equal(rewards, torch.tensor([[1.0, 2.0], [2.0, 1.0], [3.0, 1.0]]))

    returns, advantages = compute_gae(rewards, values, terminated | truncated, last_values, GAMMA, LAM)

    # env 0
    # t=2: δ = 3 + 0.5·4 - 2 = 3            A = 3                    R = 3 + 2 = 5
    # t=1: terminated: δ = 2 - 1 = 1        A = 1 (no A_2 term)      R = 1 + 1 = 2
    # t=0: δ = 1 + 0.5·1 - 0.5 = 1          A = 1 + 0.25·1 = 1.25    R = 1.25 + 0.5 = 1.75
    # env 1
    # t=2: δ = 1 + 0.5·2 - 1 = 1            A = 1                    R = 1 + 1 = 2
    # t=1: δ = 1 + 0.5·1 - 4 = -2.5         A = -2.5 + 0.25·1 = -2.25  R = -2.25 + 4 = 1.75
    # t=0: timed out (bootstrapped reward 2): δ = 2 - 2 = 0, A = 0 (no A_1 term), R = 0 + 2 = 2
    expected_advantages = torch.tensor([[1.25, 0.0], [1.0, -2.25], [3.0, 1.0]])
    expected_returns = torch.tensor([[1.75, 2.0], [2.0, 1.75], [5.0, 2.0]])
    assert torch.equal(advantages, expected_advantages)
    assert torch.equal(returns, expected_returns)


def test_lambda_one_gives_discounted_n_step_returns():
    rewards = torch.tensor([[1.0], [2.0], [4.0]])
    values = torch.tensor([[10.0], [20.0], [30.0]])
    dones = torch.zeros(3, 1, dtype=torch.bool)
    returns, _ = compute_gae(rewards, values, dones, torch.tensor([8.0]), gamma=0.5, lam=1.0)
    # R_2 = 4 + 0.5·8 = 8;  R_1 = 2 + 0.5·8 = 6;  R_0 = 1 + 0.5·6 = 4
    assert torch.equal(returns, torch.tensor([[4.0], [6.0], [8.0]]))


def test_normalize_advantages_zero_mean_unit_std():
    advantages = torch.tensor([1.0, 2.0, 3.0, 6.0])
    normalized = normalize_advantages(advantages)
    torch.testing.assert_close(normalized.mean(), torch.tensor(0.0))
    torch.testing.assert_close(normalized.std(), torch.tensor(1.0))
