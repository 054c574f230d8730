"""PPO for the state-based grasping task (an RL baseline next to the scripted expert; the pixel student
learns by DAgger from that expert instead)."""

from __future__ import annotations

from canter.rl.config import AlgoCfg, PolicyCfg
from canter.rl.runner import RunnerCfg


def arm_grasp_state_agent_cfg() -> RunnerCfg:
    return RunnerCfg(
        policy=PolicyCfg(
            actor_hidden_dims=(256, 128, 64),
            critic_hidden_dims=(256, 128, 64),
            activation="elu",
            init_noise_std=0.5,
            normalize_obs=True,
        ),
        algo=AlgoCfg(
            num_steps_per_env=32,
            num_learning_epochs=5,
            num_mini_batches=4,
            learning_rate=5e-4,
            schedule="adaptive",
            desired_kl=0.01,
            entropy_coef=0.005,
            gamma=0.98,
            lam=0.95,
            max_grad_norm=1.0,
        ),
        max_iterations=1000,
        save_interval=50,
    )
