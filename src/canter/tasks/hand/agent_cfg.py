"""PPO for in-hand reorientation (Isaac Lab's in-hand settings where they fit a CPU budget)."""

from __future__ import annotations

from canter.rl.config import AlgoCfg, PolicyCfg
from canter.rl.runner import RunnerCfg


def hand_agent_cfg() -> RunnerCfg:
    return RunnerCfg(
        policy=PolicyCfg(
            actor_hidden_dims=(256, 256, 128),
            critic_hidden_dims=(256, 256, 128),
            activation="elu",
            init_noise_std=0.5,
            normalize_obs=True,
            actor_obs_groups=("policy",),
            critic_obs_groups=("critic",),
        ),
        algo=AlgoCfg(
            num_steps_per_env=16,
            num_learning_epochs=5,
            num_mini_batches=4,
            learning_rate=5e-4,
            schedule="adaptive",
            desired_kl=0.016,
            entropy_coef=0.002,
            gamma=0.99,
            lam=0.95,
            max_grad_norm=1.0,
        ),
        max_iterations=20000,
        save_interval=100,
    )


def hand_recurrent_agent_cfg() -> RunnerCfg:
    """Dactyl's policy was an LSTM: the same PPO with an LSTM memory in front of the actor and critic."""
    cfg = hand_agent_cfg()
    cfg.policy.rnn_type = "lstm"
    cfg.policy.rnn_hidden_dim = 128
    return cfg
