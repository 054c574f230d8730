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
    ],
)
def test_invalid_fields_raise_config_error_naming_the_field(make, field):
    with pytest.raises(ConfigError, match=field.replace(".", r"\.")):
        make()
