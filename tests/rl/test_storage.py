from __future__ import annotations

import pytest
import torch

from canter.core.errors import ConfigError
from canter.core.rng import make_generator
from canter.rl.storage import RolloutStorage

NUM_STEPS = 5
NUM_ENVS = 6


def filled_storage() -> RolloutStorage:
    """Every stored quantity of transition (t, e) encodes its index k = t·NUM_ENVS + e."""
    storage = RolloutStorage(
        num_envs=NUM_ENVS,
        num_transitions_per_env=NUM_STEPS,
        observation_shapes={"policy": (2,), "critic": (1,)},
        num_actions=1,
        device="cpu",
    )
    for t in range(NUM_STEPS):
        k = torch.arange(NUM_ENVS, dtype=torch.float32) + t * NUM_ENVS
        storage.store_policy_step(
            observations={"policy": torch.stack([k, -k], dim=-1), "critic": k[:, None], "unused": k},
            actions=k[:, None],
            log_probs=k,
            action_mean=k[:, None],
            action_std=k[:, None],
            values=k,
        )
        storage.store_env_step(rewards=k, terminated=(k.long() % 4) == 0, truncated=torch.zeros(NUM_ENVS, dtype=torch.bool))
    storage.returns.copy_(storage.values)
    storage.advantages.copy_(storage.values)
    return storage


def test_add_transition_rejects_overflow():
    storage = filled_storage()
    with pytest.raises(RuntimeError, match="full"):
        storage.store_policy_step(
            observations={"policy": torch.zeros(NUM_ENVS, 2), "critic": torch.zeros(NUM_ENVS, 1)},
            actions=torch.zeros(NUM_ENVS, 1),
            log_probs=torch.zeros(NUM_ENVS),
            action_mean=torch.zeros(NUM_ENVS, 1),
            action_std=torch.zeros(NUM_ENVS, 1),
            values=torch.zeros(NUM_ENVS),
        )


@pytest.mark.parametrize("num_mini_batches", [1, 4, 7])
def test_mini_batches_visit_every_transition_exactly_once_per_epoch(num_mini_batches):
    storage = filled_storage()
    num_epochs = 3
    batches = list(storage.mini_batch_generator(num_mini_batches, num_epochs, make_generator(0, "cpu")))
    assert len(batches) == num_epochs * num_mini_batches
    everything = torch.arange(NUM_STEPS * NUM_ENVS, dtype=torch.float32)
    orders = []
    for epoch in range(num_epochs):
        epoch_batches = batches[epoch * num_mini_batches : (epoch + 1) * num_mini_batches]
        sizes = [len(b.actions) for b in epoch_batches]
        assert max(sizes) - min(sizes) <= 1
        visited = torch.cat([b.observations["policy"][:, 0] for b in epoch_batches])
        assert torch.equal(visited.sort().values, everything)
        for batch in epoch_batches:  # every field of a row belongs to the same transition
            k = batch.observations["policy"][:, 0]
            for field in (batch.actions[:, 0], batch.old_log_prob, batch.old_values, batch.returns):
                assert torch.equal(field, k)
            assert torch.equal(batch.observations["critic"][:, 0], k)
            assert batch.episode_starts is None and batch.actor_state is None
        orders.append(visited)
    assert not torch.equal(orders[0], orders[1])  # reshuffled each epoch
    assert "unused" not in batches[0].observations


def test_recurrent_mini_batches_split_by_env_and_keep_sequences_intact():
    storage = filled_storage()
    actor_state = (torch.arange(NUM_ENVS, dtype=torch.float32).reshape(1, NUM_ENVS, 1).expand(2, -1, 3),)
    critic_state = (-actor_state[0], 2 * actor_state[0])
    storage.store_initial_hidden_states(actor_state, critic_state)
    num_mini_batches = 4
    batches = list(storage.recurrent_mini_batch_generator(num_mini_batches, 2, make_generator(1, "cpu")))
    assert len(batches) == 2 * num_mini_batches
    dones = storage.dones
    for epoch in range(2):
        envs_seen = []
        for batch in batches[epoch * num_mini_batches : (epoch + 1) * num_mini_batches]:
            obs = batch.observations["policy"][..., 0]  # (T, n)
            assert obs.shape[0] == NUM_STEPS
            envs = obs[0].long()  # k at t=0 is the env index
            envs_seen += envs.tolist()
            steps = torch.arange(NUM_STEPS, dtype=torch.float32)[:, None] * NUM_ENVS
            assert torch.equal(obs, steps + envs[None].float())  # whole sequence, in time order
            assert torch.equal(batch.actions[:, 0], obs.flatten())  # flat tensors are time-major
            assert torch.equal(batch.actor_state[0], actor_state[0][:, envs])
            assert torch.equal(batch.critic_state[1], critic_state[1][:, envs])
            assert not batch.episode_starts[0].any()
            assert torch.equal(batch.episode_starts[1:], dones[:-1, envs])
        assert sorted(envs_seen) == list(range(NUM_ENVS))


def test_compute_returns_requires_a_full_rollout():
    storage = RolloutStorage(
        num_envs=2,
        num_transitions_per_env=3,
        observation_shapes={"policy": (1,)},
        num_actions=1,
        device="cpu",
    )
    with pytest.raises(RuntimeError, match="full rollout"):
        storage.compute_returns(torch.zeros(2), 0.99, 0.95, normalize=False)


def test_rollout_storage_too_large_for_memory_is_refused_with_an_estimate():
    # 4 bytes x (27 observations + 3 x 1 action + 5) + 2 flags = 142 bytes per transition
    with pytest.raises(ConfigError, match=r"^algo.num_steps_per_env: needs about [\d.]+ [TG]B of memory \(rollout storage "
                                          r"of 1,000,000,000 steps x 64 envs x 142 bytes\), only .* is available on cpu$"):
        RolloutStorage(num_envs=64, num_transitions_per_env=10**9, observation_shapes={"policy": (27,)}, num_actions=1,
                       device="cpu")
