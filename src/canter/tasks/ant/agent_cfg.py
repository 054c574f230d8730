"""PPO for the ant (Isaac Lab / rsl_rl-style settings, sized for a CPU)."""

from __future__ import annotations

from canter.rl.config import AlgoCfg, PolicyCfg
from canter.rl.runner import RunnerCfg


def ant_agent_cfg() -> RunnerCfg:
    return RunnerCfg(
        policy=PolicyCfg(
            actor_hidden_dims=(256, 128, 64),
            critic_hidden_dims=(256, 128, 64),
            activation="elu",
            init_noise_std=1.0,
            normalize_obs=True,
        ),
        algo=AlgoCfg(
            num_steps_per_env=32,
            num_learning_epochs=5,
            num_mini_batches=4,
            learning_rate=5e-4,
            entropy_coef=0.0,
            gamma=0.99,
            lam=0.95,
        ),
        max_iterations=1000,
        save_interval=50,
    )
