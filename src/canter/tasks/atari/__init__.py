"""Atari games (canter.envs.atari): the env configs and PPO's Atari settings."""

from __future__ import annotations

from canter.envs.atari import AtariEnvCfg
from canter.rl.config import AlgoCfg, CnnCfg, PolicyCfg
from canter.rl.runner import RunnerCfg


def pong_env_cfg() -> AtariEnvCfg:
    return AtariEnvCfg(game="pong")


def breakout_env_cfg() -> AtariEnvCfg:
    return AtariEnvCfg(game="breakout")


def atari_agent_cfg() -> RunnerCfg:
    """PPO with the Nature CNN shared by a linear policy head and a linear value head, the settings of
    Schulman et al.'s Atari runs (clip 0.1, 4 epochs, entropy 0.01, value weight 0.5, grad norm 0.5,
    γ 0.99, λ 0.95, Adam 2.5e-4 annealed linearly to 0 over the budget: --max-time, or max_iterations)
    with rollouts of 64 games x 32 steps for a 2-core CPU, minibatches of
    256 (8 per epoch: twice the gradient steps of 4 x 512 per frame, and 14 % less update time on
    this CPU: 42 vs 98 ms per step), the update in bfloat16 where the CPU has it natively (3.4x the
    float32 training throughput with the CNN encoded once, BENCHMARKS.md §16; "auto": float32 on an
    AVX2-only CPU, where bfloat16 is some 13x slower, §20). The anneal gave the best 90-minute Pong (+15.4 against
    +14.6 with the rate fixed; §16); GA3C keeps its rate fixed (`--algo ga3c` turns the default off)."""
    return RunnerCfg(
        policy=PolicyCfg(actor_hidden_dims=(), critic_hidden_dims=(), activation="relu", distribution="categorical",
                         actor_obs_groups=("policy",), critic_obs_groups=("policy",), image_obs_groups=("policy",),
                         cnn=CnnCfg(channels=(32, 64, 64), kernel_sizes=(8, 4, 3), strides=(4, 2, 1), output_dim=512,
                                    activation="relu", shared=True)),
        algo=AlgoCfg(num_steps_per_env=32, num_learning_epochs=4, num_mini_batches=8, clip_param=0.1,
                     value_loss_coef=0.5, entropy_coef=0.01, gamma=0.99, lam=0.95, learning_rate=2.5e-4,
                     schedule="linear", min_learning_rate=0.0, max_grad_norm=0.5, use_clipped_value_loss=True, autocast="auto"),
        max_iterations=10_000,
        save_interval=50,
        rollout_threads=0,
    )
