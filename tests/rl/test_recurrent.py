"""Recurrent policy: resets at episode ends, and the training replay reproduces the rollout."""

from __future__ import annotations

import pytest
import torch

from canter.core.rng import make_generator
from canter.rl.config import AlgoCfg, PolicyCfg
from canter.rl.factory import make_algorithm
from canter.rl.recurrent import ActorCriticRecurrent

from .fake_env import TargetEnv, collect_rollout


def recurrent_cfg(rnn_type: str, **overrides) -> PolicyCfg:
    return PolicyCfg(
        actor_hidden_dims=(16,),
        critic_hidden_dims=(16,),
        rnn_type=rnn_type,  # type: ignore[arg-type]
        rnn_hidden_dim=8,
        rnn_num_layers=2,
        **overrides,
    )


@pytest.mark.parametrize("rnn_type", ["gru", "lstm"])
def test_reset_zeroes_exactly_the_envs_that_ended(rnn_type):
    policy = ActorCriticRecurrent(
        {"policy": (2,)}, 1, recurrent_cfg(rnn_type), init_generator=make_generator(0, "cpu")
    )
    env = TargetEnv(5, with_critic_group=False)
    generator = make_generator(1, "cpu")
    for _ in range(3):
        policy.act(env.get_observations(), generator)
        policy.evaluate(env.get_observations())
    before = policy.hidden_states()
    assert before is not None
    clone = ActorCriticRecurrent(
        {"policy": (2,)}, 1, recurrent_cfg(rnn_type), init_generator=make_generator(0, "cpu")
    )
    clone.set_hidden_states(*before)  # e.g. restored from a checkpoint
    obs = env.get_observations()
    assert torch.equal(clone.act_inference(obs), policy.act_inference(obs))
    before = policy.hidden_states()
    assert before is not None
    dones = torch.tensor([False, True, False, False, True])
    policy.reset(dones)
    after = policy.hidden_states()
    assert after is not None
    for state_before, state_after in zip(before[0] + before[1], after[0] + after[1], strict=True):
        assert state_after.shape == (2, 5, 8)
        assert torch.all(state_after[:, dones] == 0)
        assert torch.equal(state_after[:, ~dones], state_before[:, ~dones])
        assert torch.all(state_before[:, dones] != 0)


@pytest.mark.parametrize("rnn_type", ["gru", "lstm"])
def test_training_replay_reproduces_rollout_outputs_across_episode_boundaries(rnn_type):
    env = TargetEnv(6, max_episode_length=3, seed=2)
    algo_cfg = AlgoCfg(num_steps_per_env=7, num_mini_batches=3)
    algorithm = make_algorithm(env, recurrent_cfg(rnn_type), algo_cfg, seed=0)
    obs = collect_rollout(algorithm, env, env.get_observations())  # first rollout: zero start state
    algorithm.compute_returns(obs)
    algorithm.storage.clear()
    collect_rollout(algorithm, env, obs)  # the second rollout starts from a non-zero state
    storage, policy = algorithm.storage, algorithm.policy
    assert storage.dones[:-1].any()  # episodes end inside the sequence
    assert storage.initial_actor_state is not None and storage.initial_critic_state is not None
    assert all(s.abs().sum() > 0 for s in storage.initial_actor_state)

    # all envs in rollout order: the replay repeats the rollout's operations
    episode_starts = torch.zeros_like(storage.dones)
    episode_starts[1:] = storage.dones[:-1]
    with torch.no_grad():
        mean, _, values = policy.forward_train(
            storage.observations, episode_starts, storage.initial_actor_state, storage.initial_critic_state
        )
    torch.testing.assert_close(mean, storage.action_mean.flatten(0, 1), rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(values, storage.values.flatten(0, 1), rtol=1e-6, atol=1e-6)

    # the same through the shuffled env-split minibatches the update uses
    for batch in storage.recurrent_mini_batch_generator(3, 1, make_generator(3, "cpu")):
        with torch.no_grad():
            mean, _, values = policy.forward_train(
                batch.observations, batch.episode_starts, batch.actor_state, batch.critic_state
            )
        torch.testing.assert_close(mean, batch.old_mean, rtol=1e-6, atol=1e-6)
        torch.testing.assert_close(values, batch.old_values, rtol=1e-6, atol=1e-6)

    # without the resets the replay would differ: the check above is sensitive to masking
    with torch.no_grad():
        _, _, unmasked = policy.forward_train(
            storage.observations,
            torch.zeros_like(episode_starts),
            storage.initial_actor_state,
            storage.initial_critic_state,
        )
    assert not torch.allclose(unmasked, storage.values.flatten(0, 1), atol=1e-4)
