from __future__ import annotations

import math

import pytest
import torch

from canter.core.errors import ConfigError
from canter.core.rng import make_generator
from canter.rl.config import PolicyCfg
from canter.rl.distributions import gaussian_entropy, gaussian_kl, gaussian_log_prob
from canter.rl.modules import ActorCritic, build_mlp

SHAPES = {"policy": (2,), "critic": (3,)}


def small_cfg(**overrides) -> PolicyCfg:
    return PolicyCfg(actor_hidden_dims=(8, 8), critic_hidden_dims=(8,), **overrides)


def make_policy(cfg: PolicyCfg, shapes=SHAPES, seed: int = 0) -> ActorCritic:
    return ActorCritic(shapes, 2, cfg, init_generator=make_generator(seed, "cpu"))


def observations(num_envs: int = 4) -> dict[str, torch.Tensor]:
    generator = make_generator(7, "cpu")
    return {g: torch.randn(num_envs, s[0], generator=generator) for g, s in SHAPES.items()}


def test_gaussian_functions_match_torch_distributions():
    generator = make_generator(0, "cpu")
    mean, actions = torch.randn(5, 3, generator=generator), torch.randn(5, 3, generator=generator)
    std = torch.rand(5, 3, generator=generator) + 0.1
    new_mean, new_std = mean + 0.3, std * 1.7
    normal = torch.distributions.Normal(mean, std)
    torch.testing.assert_close(gaussian_log_prob(actions, mean, std), normal.log_prob(actions).sum(-1))
    torch.testing.assert_close(gaussian_entropy(std), normal.entropy().sum(-1))
    expected_kl = torch.distributions.kl_divergence(normal, torch.distributions.Normal(new_mean, new_std))
    torch.testing.assert_close(gaussian_kl(mean, std, new_mean, new_std), expected_kl.sum(-1))


def test_init_is_seeded_and_leaves_global_rng_alone():
    global_state = torch.random.get_rng_state()
    a, b, c = (
        make_policy(small_cfg(), seed=0),
        make_policy(small_cfg(), seed=0),
        make_policy(small_cfg(), seed=1),
    )
    assert torch.equal(torch.random.get_rng_state(), global_state)
    for pa, pb, pc in zip(a.parameters(), b.parameters(), c.parameters(), strict=True):
        assert torch.equal(pa, pb)
        if pa.dim() == 2:
            assert not torch.equal(pa, pc)


def test_obs_groups_are_concatenated_in_order_and_critic_falls_back_to_actor_groups():
    policy = make_policy(small_cfg(actor_obs_groups=("critic", "policy")))
    assert policy.actor[0].in_features == 5 and policy.critic[0].in_features == 3
    obs = observations()
    assert torch.equal(
        policy.encode(obs, policy.actor_obs_groups), torch.cat([obs["critic"], obs["policy"]], -1)
    )
    symmetric = make_policy(small_cfg(), shapes={"policy": (2,)})
    assert symmetric.critic_obs_groups == ("policy",)
    assert symmetric.critic[0].in_features == 2
    with pytest.raises(ConfigError, match=r"policy\.actor_obs_groups"):
        make_policy(small_cfg(actor_obs_groups=("camera",)))
    # only the default group falls back: a critic group named on purpose must exist
    with pytest.raises(ConfigError, match=r"^policy\.critic_obs_groups: env has no group 'nosuch' \(has \['critic', 'policy'\]\)$"):
        make_policy(small_cfg(critic_obs_groups=("nosuch",)))
    with pytest.raises(ConfigError, match=r"env has no group 'nosuch'"):
        make_policy(small_cfg(critic_obs_groups=("critic", "nosuch")))


def test_act_uses_only_the_given_generator_and_log_prob_entropy_are_consistent():
    policy = make_policy(small_cfg(init_noise_std=0.5, noise_std_type="log"))
    obs = observations()
    global_state = torch.random.get_rng_state()
    step_a = policy.act(obs, make_generator(5, "cpu"))
    step_b = policy.act(obs, make_generator(5, "cpu"))
    assert torch.equal(torch.random.get_rng_state(), global_state)
    assert torch.equal(step_a.actions, step_b.actions)
    assert torch.equal(step_a.mean, policy.act_inference(obs))
    assert torch.allclose(step_a.std, torch.full((4, 2), 0.5))
    torch.testing.assert_close(step_a.log_prob, policy.log_prob(step_a.actions, step_a.mean, step_a.std))
    expected_entropy = 2 * (0.5 + 0.5 * math.log(2 * math.pi) + math.log(0.5))
    torch.testing.assert_close(policy.entropy(step_a.mean, step_a.std), torch.full((4,), expected_entropy))
    assert policy.evaluate(obs).shape == (4,)


def test_normalizers_per_group_update_only_in_training_mode():
    policy = make_policy(small_cfg(normalize_obs=True))
    obs = observations()
    policy.eval()
    policy.update_normalization(obs)
    assert int(policy.normalizers["policy"].count) == 0
    policy.train()
    policy.update_normalization(obs)
    assert int(policy.normalizers["critic"].count) == 4
    torch.testing.assert_close(policy.normalizers["policy"].mean, obs["policy"].mean(0))
    assert "normalizers.critic.var" in policy.state_dict()


def test_under_bf16_autocast_the_hidden_layers_run_in_bf16_and_the_output_layer_in_float32():
    """A value near 40: bf16 spaces its numbers 0.25 apart there; the float32 output layer keeps what
    the hidden layers' rounding leaves (a few hundredths), and the hidden layers did run in bf16."""
    mlp = build_mlp(8, (64, 64), 1, "elu", output_gain=1.0, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        mlp[-1].bias.fill_(40.0)
    x = torch.randn(256, 8, generator=torch.Generator().manual_seed(1))
    reference = mlp(x)
    dtypes = []
    for layer in (mlp[0], mlp[-1]):
        layer.register_forward_hook(lambda module, args, out: dtypes.append((args[0].dtype, out.dtype)))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        mixed = mlp(x)
    first, output = dtypes
    assert first == (torch.float32, torch.bfloat16) and output == (torch.float32, torch.float32)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        whole_bf16 = torch.nn.Sequential(*mlp)(x)  # every layer in bf16, the output too
    assert mixed.dtype == torch.float32 and whole_bf16.dtype == torch.bfloat16
    assert (mixed - reference).abs().max() < 0.06
    assert torch.equal(whole_bf16.float() % 0.25, torch.zeros_like(reference))  # on bf16's grid
    assert (mixed % 0.25 != 0).float().mean() > 0.9
    assert torch.equal(mlp(x), reference)  # without autocast: nn.Sequential's float32 forward
