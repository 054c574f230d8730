from __future__ import annotations

import dataclasses

import torch

from canter.rl.a2c import A2C
from canter.rl.config import PolicyCfg, a2c_cfg
from canter.rl.factory import make_algorithm

from .fake_env import TargetEnv, deterministic_error, train


def test_a2c_improves_on_the_target_task():
    env = TargetEnv(64, seed=1)
    algo_cfg = dataclasses.replace(a2c_cfg(), num_steps_per_env=16, learning_rate=3e-3)
    policy_cfg = PolicyCfg(actor_hidden_dims=(32, 32), critic_hidden_dims=(32, 32), normalize_obs=True)
    algorithm = make_algorithm(env, policy_cfg, algo_cfg, seed=0)
    assert isinstance(algorithm, A2C)
    initial_error = deterministic_error(algorithm)
    stats = train(algorithm, env, 20)
    final_error = deterministic_error(algorithm)
    assert final_error < 0.25 * initial_error, (initial_error, final_error)
    assert set(stats[0]) == {"policy_loss", "value_loss", "entropy", "kl", "grad_norm", "learning_rate"}
    assert all(torch.isfinite(v) for v in stats[-1].values())


def test_a2c_takes_one_gradient_step_per_update():
    env = TargetEnv(8)
    policy_cfg = PolicyCfg(actor_hidden_dims=(8,), critic_hidden_dims=(8,))
    algorithm = make_algorithm(env, policy_cfg, a2c_cfg(), seed=0)
    train(algorithm, env, 3)
    steps = {int(s["step"]) for s in algorithm.optimizer.state.values()}
    assert steps == {3}
