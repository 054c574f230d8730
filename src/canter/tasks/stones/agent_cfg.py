"""PPO for dog-stones: rsl_rl-style settings, networks sized for a CPU, a small initial action noise
(the policy acts on top of the heuristic controller, which already walks)."""

from __future__ import annotations

from canter.rl.config import AlgoCfg, PolicyCfg
from canter.rl.runner import RunnerCfg


def dog_stones_agent_cfg() -> RunnerCfg:
    return RunnerCfg(
        policy=PolicyCfg(
            actor_hidden_dims=(256, 128, 64),
            critic_hidden_dims=(256, 128, 64),
            activation="elu",
            init_noise_std=0.3,
            actor_obs_groups=("policy",),
            critic_obs_groups=("critic",),
        ),
        algo=AlgoCfg(
            num_steps_per_env=24,
            num_learning_epochs=5,
            num_mini_batches=4,
            learning_rate=1e-3,
            schedule="adaptive",
            desired_kl=0.01,
            entropy_coef=0.005,
            gamma=0.99,
            lam=0.95,
            max_grad_norm=1.0,
        ),
        max_iterations=1500,
        save_interval=50,
    )
