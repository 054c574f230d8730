from __future__ import annotations

import pytest

from canter.core.errors import ConfigError
from canter.rl.config import AlgoCfg, PolicyCfg, a2c_cfg, ppo_cfg


def test_defaults_are_the_legged_gym_ones():
    cfg = ppo_cfg()
    assert (cfg.num_steps_per_env, cfg.num_learning_epochs, cfg.num_mini_batches) == (24, 5, 4)
    assert (cfg.clip_param, cfg.gamma, cfg.lam, cfg.learning_rate) == (0.2, 0.99, 0.95, 1e-3)
    assert (cfg.schedule, cfg.desired_kl, cfg.max_grad_norm) == ("adaptive", 0.01, 1.0)
    assert a2c_cfg().algo == "a2c" and a2c_cfg() is not a2c_cfg()
    assert PolicyCfg().actor_hidden_dims == (512, 256, 128)


@pytest.mark.parametrize(
    ("make", "field"),
    [
        (lambda: PolicyCfg(activation="gelu"), "policy.activation"),  # type: ignore[arg-type]
        (lambda: PolicyCfg(init_noise_std=0.0), "policy.init_noise_std"),
        (lambda: PolicyCfg(rnn_type="rnn"), "policy.rnn_type"),  # type: ignore[arg-type]
        (lambda: PolicyCfg(actor_hidden_dims=(64, 0)), "policy.actor_hidden_dims"),
        (lambda: PolicyCfg(critic_obs_groups=()), "policy.critic_obs_groups"),
        (lambda: AlgoCfg(algo="sac"), "algo.algo"),  # type: ignore[arg-type]
        (lambda: AlgoCfg(num_mini_batches=0), "algo.num_mini_batches"),
        (lambda: AlgoCfg(gamma=1.5), "algo.gamma"),
        (lambda: AlgoCfg(schedule="cosine"), "algo.schedule"),  # type: ignore[arg-type]
        (lambda: AlgoCfg(learning_rate=0.1), "algo.learning_rate"),
        (lambda: AlgoCfg(schedule="linear", learning_rate=1e-4, min_learning_rate=1e-3), "algo.min_learning_rate"),
        (lambda: AlgoCfg(max_grad_norm=0.0), "algo.max_grad_norm"),
        (lambda: AlgoCfg(bounds_loss_coef=-0.1), "algo.bounds_loss_coef"),
        (lambda: AlgoCfg(algo="dagger", bounds_loss_coef=0.1), "algo.bounds_loss_coef"),
        (lambda: AlgoCfg(action_bound=0.0), "algo.action_bound"),
    ],
)
def test_invalid_fields_raise_config_error_naming_the_field(make, field):
    with pytest.raises(ConfigError, match=field.replace(".", r"\.")):
        make()


def test_the_bound_loss_is_on_by_default_for_the_plain_policy_gradients_only():
    gaussian, categorical = False, True
    assert AlgoCfg(algo="ppo").bounds_coef(gaussian) == 0.0  # PPO's clipped ratio bounds its steps
    assert AlgoCfg(algo="a2c").bounds_coef(gaussian) == 0.01
    assert AlgoCfg(algo="ga3c").bounds_coef(gaussian) == 0.01
    assert AlgoCfg(algo="dagger").bounds_coef(gaussian) == 0.0
    assert AlgoCfg(algo="ga3c").bounds_coef(categorical) == 0.0  # no means to bound
    assert AlgoCfg(algo="ppo", bounds_loss_coef=0.5).bounds_coef(gaussian) == 0.5
    assert AlgoCfg(algo="a2c", bounds_loss_coef=0.0).bounds_coef(gaussian) == 0.0


def test_ga3c_normalizes_its_advantages_by_default():
    from canter.rl.config import Ga3cCfg

    assert Ga3cCfg().normalize_advantages  # as the synchronous learners do per rollout (ant diverged without)


def test_an_explicit_bound_loss_on_a_categorical_policy_is_refused():
    from canter.rl.factory import check_action_space
    from tests.rl.fake_env import PickTheLit

    categorical = PolicyCfg(distribution="categorical")
    check_action_space(PickTheLit(4), categorical, AlgoCfg(algo="ga3c"))  # the default: none, quietly
    with pytest.raises(ConfigError, match=r"algo\.bounds_loss_coef: bounds the means of a Gaussian policy"):
        check_action_space(PickTheLit(4), categorical, AlgoCfg(algo="ga3c", bounds_loss_coef=0.01))
