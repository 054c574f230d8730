"""PPO for cartpole: a small network, short rollouts; learns in seconds on a 2-core CPU."""

from __future__ import annotations

from canter.rl.config import AlgoCfg, PolicyCfg
from canter.rl.runner import RunnerCfg


def cartpole_agent_cfg() -> RunnerCfg:
    return RunnerCfg(
        policy=PolicyCfg(actor_hidden_dims=(32, 32), critic_hidden_dims=(32, 32), activation="elu", init_noise_std=1.0),
        algo=AlgoCfg(
            num_steps_per_env=16,
            num_learning_epochs=5,
            num_mini_batches=4,
            learning_rate=1e-3,
            entropy_coef=0.005,
            gamma=0.99,
            lam=0.95,
        ),
        max_iterations=150,
        save_interval=50,
    )
