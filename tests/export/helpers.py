"""Shared builders for the export tests: a small dog env and trained-looking policies on it."""

from __future__ import annotations

import torch
from torch import nn

from canter.core.device import torch_threads
from canter.core.rng import make_generator
from canter.envs.manager_env import ManagerBasedRLEnv
from canter.rl.config import PolicyCfg
from canter.rl.factory import make_policy
from canter.rl.modules import ActorCritic
from canter.tasks import REGISTRY

ARCHITECTURES = ("mlp", "gru", "lstm")


def dog_env(num_envs: int = 4, seed: int = 0, history_length: int = 0) -> ManagerBasedRLEnv:
    """dog-flat on the cpu; history_length > 0 keeps that many frames of joint_pos in the policy group."""
    cfg = REGISTRY.get("dog-flat").env_cfg()
    cfg.num_envs, cfg.seed = num_envs, seed
    cfg.sim.num_threads = 1
    if history_length:
        cfg.observations["policy"].terms["joint_pos"].history_length = history_length
    return ManagerBasedRLEnv(cfg)


def trained_looking_policy(env: ManagerBasedRLEnv, architecture: str, *, clip: float | None = 10.0,
                           seed: int = 0) -> ActorCritic:
    """A dog-sized policy with normalizer statistics from the env and a random output layer scaled so
    that the largest action on the env's observations is 1.5 (the initial output gain of 0.01 would
    give actions near 0, against which a 1e-5 tolerance means little); eval mode."""
    cfg = PolicyCfg(actor_hidden_dims=(64, 32), critic_hidden_dims=(16,), normalize_obs=True,
                    rnn_type="none" if architecture == "mlp" else architecture,  # type: ignore[arg-type]
                    rnn_hidden_dim=16, rnn_num_layers=2 if architecture == "lstm" else 1)
    generator = make_generator(seed, "cpu")
    policy = make_policy(env.observation_shapes, env.num_actions, cfg, init_generator=generator)
    for normalizer in policy.normalizers.values():
        normalizer.clip = clip  # type: ignore[assignment]
    obs, _ = env.reset()
    policy.train()
    with torch.no_grad(), torch_threads(1):
        for _ in range(5):
            policy.update_normalization(obs)
            obs, *_ = env.step(0.3 * torch.randn(env.num_envs, env.num_actions, generator=generator))
        policy.eval()
        last = [m for m in policy.actor if isinstance(m, nn.Linear)][-1]
        last.weight.copy_(torch.randn(last.weight.shape, generator=generator))
        policy.hidden_states(env.num_envs)
        policy.reset(torch.ones(env.num_envs, dtype=torch.bool))
        last.weight.mul_(1.5 / policy.act_inference(obs).abs().max())
        policy.reset(torch.ones(env.num_envs, dtype=torch.bool))
    return policy
