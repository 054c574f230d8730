"""Builds a policy and its algorithm from configs and a seed: the one place that wires them."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import cast

import torch

from canter.core.errors import ConfigError
from canter.core.mirror import Mirror
from canter.core.rng import derive_seed, make_generator
from canter.envs.vec_env import VecEnv
from canter.rl.a2c import A2C
from canter.rl.algorithm import OnPolicyAlgorithm
from canter.rl.config import AlgoCfg, PolicyCfg
from canter.rl.cuda_graph import check_cuda_graph
from canter.rl.dagger import Dagger, Expert
from canter.rl.modules import ActorCritic
from canter.rl.ppo import PPO
from canter.rl.recurrent import ActorCriticRecurrent

# "ga3c" trains on its own runner (canter.rl.ga3c); a runner built for one of its runs (eval, play,
# export) only acts, and A2C's policy and storage serve that
ALGORITHMS: dict[str, type[OnPolicyAlgorithm]] = {"ppo": PPO, "a2c": A2C, "ga3c": A2C}


def make_policy(
    observation_shapes: Mapping[str, tuple[int, ...]],
    num_actions: int,
    cfg: PolicyCfg,
    *,
    init_generator: torch.Generator,
) -> ActorCritic:
    """An ActorCritic, or an ActorCriticRecurrent when cfg.rnn_type is not "none" (on the CPU)."""
    policy_class = ActorCritic if cfg.rnn_type == "none" else ActorCriticRecurrent
    return policy_class(observation_shapes, num_actions, cfg, init_generator=init_generator)


def check_action_space(env: VecEnv, policy_cfg: PolicyCfg, algo_cfg: AlgoCfg) -> None:
    """One-line errors for a policy or algorithm that cannot drive the env's kind of actions: a
    Gaussian (Box-action) policy on an env with discrete actions (`env.discrete_actions`), a
    categorical one on continuous actions, DAgger (a regression of continuous actions) on discrete."""
    discrete = bool(getattr(env, "discrete_actions", False))
    kind = f"{env.num_actions} discrete actions" if discrete else f"{env.num_actions} continuous actions"
    if discrete and policy_cfg.distribution != "categorical":
        raise ConfigError(f"policy.distribution: {policy_cfg.distribution!r} is for Box actions; this env has {kind} "
                          "(use --agent.policy.distribution categorical)")
    if not discrete and policy_cfg.distribution == "categorical":
        raise ConfigError(f"policy.distribution: 'categorical' needs discrete actions; this env has {kind}")
    if discrete and algo_cfg.bounds_loss_coef:
        raise ConfigError(f"algo.bounds_loss_coef: bounds the means of a Gaussian policy; this env has {kind} "
                          "and a categorical policy")
    if discrete and algo_cfg.algo == "dagger":
        raise ConfigError(f"algo.algo: 'dagger' regresses continuous actions; this env has {kind} (use ppo or a2c)")


def env_symmetry(env: VecEnv, policy_cfg: PolicyCfg, algo_cfg: AlgoCfg) -> tuple[dict[str, Mirror], Mirror] | None:
    """The env's mirrors when algo_cfg.symmetry is on (None when off); one-line errors when the
    task declares none, a group the policy reads has none, or the policy cannot use them."""
    if algo_cfg.symmetry == "off":
        return None
    where = f"algo.symmetry: {algo_cfg.symmetry!r}"
    if algo_cfg.algo != "ppo":
        raise ConfigError(f"{where} is implemented for ppo, not {algo_cfg.algo!r}")
    if policy_cfg.distribution != "gaussian" or policy_cfg.rnn_type != "none":
        raise ConfigError(f"{where} needs a feed-forward Gaussian policy")
    source = getattr(env, "symmetry", None)
    maps = cast("tuple[dict[str, Mirror], Mirror] | None", source() if callable(source) else None)
    if maps is None:
        raise ConfigError(f"{where}: this task declares no left-right mirror (EnvCfg.symmetry)")
    groups, _ = maps
    missing = [g for g in (*policy_cfg.actor_obs_groups, *policy_cfg.critic_obs_groups) if g not in groups]
    if missing:
        raise ConfigError(f"{where}: observation group(s) {', '.join(sorted(set(missing)))} have a term without a mirror")
    return maps


def make_algorithm(
    env: VecEnv, policy_cfg: PolicyCfg, algo_cfg: AlgoCfg, *, seed: int, rank: int = 0, expert: Expert | None = None
) -> OnPolicyAlgorithm | Dagger:
    """The algorithm named by algo_cfg.algo with a fresh policy, on env.device ("dagger": a student
    policy that imitates `expert`, obs -> actions; see canter.rl.dagger).

    Seeds: derive_seed(seed, 0) draws the initial parameters (CPU generator, so identical on every
    device and every rank); derive_seed(seed, 1) seeds the algorithm's generator on env.device, and
    derive_seed(seed, 1, rank) that of rank > 0 under torch.distributed (own action noise and
    minibatch order per rank; rank 0 draws what a single process draws).
    """
    check_action_space(env, policy_cfg, algo_cfg)
    check_cuda_graph(algo_cfg)
    if algo_cfg.algo == "ga3c":
        algo_cfg = dataclasses.replace(algo_cfg, algo="a2c")
    init_generator = make_generator(derive_seed(seed, 0), "cpu")
    policy = make_policy(env.observation_shapes, env.num_actions, policy_cfg, init_generator=init_generator)
    generator = make_generator(derive_seed(seed, 1) if rank == 0 else derive_seed(seed, 1, rank), env.device)
    dtypes = getattr(env, "observation_dtypes", None)
    if algo_cfg.algo == "dagger":
        return Dagger(policy, algo_cfg, num_envs=env.num_envs, device=env.device, generator=generator, expert=expert,
                      observation_dtypes=dtypes, observation_shapes=env.observation_shapes,
                      init_generator=init_generator)
    algorithm_class = ALGORITHMS[algo_cfg.algo]
    return algorithm_class(policy, algo_cfg, num_envs=env.num_envs, device=env.device, generator=generator,
                           observation_dtypes=dtypes, symmetry=env_symmetry(env, policy_cfg, algo_cfg))
