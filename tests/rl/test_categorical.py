"""Discrete actions: categorical log-probs, entropy and KL by hand, Gumbel-max sampling frequencies,
PPO and A2C learning a small discrete task, the shared-feature act/evaluate, bf16 autocast."""

from __future__ import annotations

import math
from typing import Any

import pytest
import torch

from canter.core.errors import ConfigError
from canter.core.rng import make_generator
from canter.rl.algorithm import bf16_autocast
from canter.rl.config import AlgoCfg, PolicyCfg
from canter.rl.distributions import (
    categorical_entropy,
    categorical_kl,
    categorical_log_prob,
    categorical_sample,
)
from canter.rl.factory import make_algorithm
from canter.rl.modules import ActorCritic
from canter.tasks.atari import atari_agent_cfg
from tests.rl.fake_env import PickTheLit

LOGITS = torch.tensor([[0.0, math.log(2.0), math.log(3.0)]])  # probabilities 1/6, 2/6, 3/6


def test_log_prob_entropy_and_kl_by_hand():
    third = torch.tensor([[0.0, 0.0, 1.0]])
    assert categorical_log_prob(third, LOGITS).item() == pytest.approx(math.log(0.5))
    assert categorical_log_prob(torch.tensor([[1.0, 0.0, 0.0]]), LOGITS).item() == pytest.approx(math.log(1 / 6))
    p = [1 / 6, 2 / 6, 3 / 6]
    assert categorical_entropy(LOGITS).item() == pytest.approx(-sum(x * math.log(x) for x in p))
    uniform = torch.zeros(1, 3)
    assert categorical_entropy(uniform).item() == pytest.approx(math.log(3.0))
    # KL(p ‖ uniform) = Σ p log(3p)
    assert categorical_kl(LOGITS, uniform).item() == pytest.approx(sum(x * math.log(3 * x) for x in p))
    assert categorical_kl(LOGITS, LOGITS).item() == pytest.approx(0.0, abs=1e-7)
    # logits are defined up to a constant
    assert categorical_log_prob(third, LOGITS + 5.0).item() == pytest.approx(math.log(0.5))


def test_gumbel_max_samples_are_one_hot_with_the_softmax_frequencies():
    generator = make_generator(0, "cpu")
    samples = categorical_sample(LOGITS.expand(60_000, 3), generator)
    assert torch.equal(samples.sum(dim=1), torch.ones(60_000))
    assert set(samples.unique().tolist()) == {0.0, 1.0}
    frequencies = samples.mean(dim=0)
    torch.testing.assert_close(frequencies, torch.tensor([1 / 6, 2 / 6, 3 / 6]), atol=0.01, rtol=0.0)


def _policy_cfg(**overrides: Any) -> PolicyCfg:
    return PolicyCfg(actor_hidden_dims=(16,), critic_hidden_dims=(16,), distribution="categorical",
                     critic_obs_groups=("policy",), **overrides)


@pytest.mark.parametrize("algo", ["ppo", "a2c"])
def test_ppo_and_a2c_learn_a_discrete_choice(algo):
    env = PickTheLit()
    cfg = AlgoCfg(algo=algo, num_steps_per_env=8, learning_rate=3e-3, schedule="fixed", entropy_coef=0.0, lam=1.0,
                  num_learning_epochs=4, num_mini_batches=2)
    algorithm = make_algorithm(env, _policy_cfg(), cfg, seed=0)  # type: ignore[arg-type]
    obs = env.get_observations()
    for _ in range(40 if algo == "ppo" else 120):
        for _ in range(cfg.num_steps_per_env):
            actions = algorithm.act(obs)
            assert torch.equal(actions.sum(dim=1), torch.ones(env.num_envs))  # one-hot rows
            obs, reward, terminated, truncated, extras = env.step(actions)
            algorithm.process_env_step(reward, terminated, truncated, extras)
        algorithm.compute_returns(obs)
        stats = algorithm.update()
    greedy = algorithm.policy.act_inference(obs).argmax(dim=1)
    assert (greedy == env.cue).float().mean() == 1.0
    assert float(stats["entropy"]) < 0.5 * math.log(4)


def test_a_policy_must_match_the_env_action_space():
    env = PickTheLit()
    with pytest.raises(ConfigError, match=r"^policy.distribution: 'gaussian' is for Box actions; this env has 4 discrete"):
        make_algorithm(env, PolicyCfg(critic_obs_groups=("policy",)), AlgoCfg(), seed=0)  # type: ignore[arg-type]
    env.discrete_actions = False
    with pytest.raises(ConfigError, match=r"^policy.distribution: 'categorical' needs discrete actions"):
        make_algorithm(env, _policy_cfg(), AlgoCfg(), seed=0)  # type: ignore[arg-type]


@pytest.mark.parametrize("distribution", ["gaussian", "categorical"])
def test_shared_features_act_and_evaluate_equals_act_then_evaluate(distribution):
    shapes = {"policy": (4,)}
    cfg = PolicyCfg(actor_hidden_dims=(8,), critic_hidden_dims=(8,), critic_obs_groups=("policy",),
                    distribution=distribution, normalize_obs=True)
    policy = ActorCritic(shapes, 4, cfg, init_generator=make_generator(0, "cpu"))
    assert policy.shared_features
    obs = {"policy": torch.randn(5, 4, generator=make_generator(1, "cpu"))}
    step, value = policy.act_and_evaluate(obs, make_generator(2, "cpu"))
    reference = policy.act(obs, make_generator(2, "cpu"))
    for got, want in zip(step, reference, strict=True):
        assert torch.equal(got, want)
    assert torch.equal(value, policy.evaluate(obs))
    mean, _std, values = policy.forward_train(obs)
    assert torch.equal(mean, reference.mean) and torch.equal(values, policy.evaluate(obs))


def _one_update(autocast: str) -> dict[str, float]:
    env = PickTheLit(seed=3)
    cfg = AlgoCfg(num_steps_per_env=8, learning_rate=1e-3, schedule="fixed", autocast=autocast)  # type: ignore[arg-type]
    algorithm = make_algorithm(env, _policy_cfg(), cfg, seed=0)  # type: ignore[arg-type]
    obs = env.get_observations()
    for _ in range(cfg.num_steps_per_env):
        obs, reward, terminated, truncated, extras = env.step(algorithm.act(obs))
        algorithm.process_env_step(reward, terminated, truncated, extras)
    algorithm.compute_returns(obs)
    return {k: float(v) for k, v in algorithm.update().items()}


def test_bf16_autocast_update_stays_close_to_float32():
    results = {autocast: _one_update(autocast) for autocast in ("off", "bf16")}
    assert all(math.isfinite(v) for v in results["bf16"].values())
    for name in ("value_loss", "entropy"):
        assert results["bf16"][name] == pytest.approx(results["off"][name], rel=0.05, abs=0.02)


def test_auto_autocast_is_bf16_only_where_the_device_runs_it_natively(monkeypatch):
    from canter.rl import algorithm as algorithm_module

    cpu, cuda = torch.device("cpu"), torch.device("cuda")
    assert bf16_autocast("bf16", cpu) and not bf16_autocast("off", cpu) and not bf16_autocast("off", cuda)
    monkeypatch.setattr(algorithm_module, "cpu_has_fast_bf16", lambda: False)  # an AVX2-only CPU
    assert not bf16_autocast("auto", cpu) and bf16_autocast("bf16", cpu) and bf16_autocast("auto", cuda)
    monkeypatch.setattr(algorithm_module, "cpu_has_fast_bf16", lambda: True)  # AVX512-BF16 / AMX
    assert bf16_autocast("auto", cpu)
    assert atari_agent_cfg().algo.autocast == "auto"


@pytest.mark.parametrize(("machine", "onednn", "avx512_bf16", "amx", "fast"), [
    ("x86_64", True, False, False, False),  # AVX-512 without AVX512-BF16: oneDNN says yes, but emulates bf16
    ("x86_64", True, True, False, True),  # AVX512-BF16 (Cooper Lake, Zen 4 and 5)
    ("x86_64", True, False, True, True),  # AMX (Sapphire Rapids and later)
    ("x86_64", False, False, False, False),  # AVX2 only
    ("aarch64", True, False, False, True),  # there oneDNN's check is the CPU's bf16 extension
    ("aarch64", False, False, False, False),
])
def test_fast_bf16_needs_bf16_in_hardware(monkeypatch, machine, onednn, avx512_bf16, amx, fast):
    from canter.rl import algorithm as algorithm_module

    monkeypatch.setattr(algorithm_module.platform, "machine", lambda: machine)
    monkeypatch.setattr(torch.ops.mkldnn, "_is_mkldnn_bf16_supported", lambda: onednn)
    monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", lambda: avx512_bf16)
    monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda: amx)
    algorithm_module.cpu_has_fast_bf16.cache_clear()
    try:
        assert algorithm_module.cpu_has_fast_bf16() is fast
    finally:
        algorithm_module.cpu_has_fast_bf16.cache_clear()


def test_auto_autocast_on_a_cpu_without_bf16_is_the_float32_update(monkeypatch):
    from canter.rl import algorithm as algorithm_module

    monkeypatch.setattr(algorithm_module, "cpu_has_fast_bf16", lambda: False)
    assert _one_update("auto") == _one_update("off")
    monkeypatch.setattr(algorithm_module, "cpu_has_fast_bf16", lambda: True)
    assert _one_update("auto") == _one_update("bf16")
