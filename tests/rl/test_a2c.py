from __future__ import annotations

import dataclasses

import torch

from canter.rl.a2c import A2C
from canter.rl.config import PolicyCfg, a2c_cfg
from canter.rl.factory import make_algorithm

from .fake_env import SaturatedTarget, TargetEnv, deterministic_error, train


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
    assert set(stats[0]) == {"policy_loss", "value_loss", "entropy", "kl", "grad_norm", "learning_rate", "bounds_loss"}
    assert all(torch.isfinite(v) for v in stats[-1].values())


def test_a2c_takes_one_gradient_step_per_update():
    env = TargetEnv(8)
    policy_cfg = PolicyCfg(actor_hidden_dims=(8,), critic_hidden_dims=(8,))
    algorithm = make_algorithm(env, policy_cfg, a2c_cfg(), seed=0)
    train(algorithm, env, 3)
    steps = {int(s["step"]) for s in algorithm.optimizer.state.values()}
    assert steps == {3}


def test_the_bound_loss_keeps_a_saturated_mean_near_its_bound():
    """Where every action past the actuator's limit is equally best, A2C's mean drifts out without
    end (here to ~3.9 in 100 updates); the bound loss (weight 1 here, 0.01 by default) holds it near
    action_bound = 1.1."""
    means = {}
    for coef in (0.0, 1.0):
        env = SaturatedTarget(64)
        algo_cfg = dataclasses.replace(a2c_cfg(), learning_rate=3e-3, bounds_loss_coef=coef)
        algorithm = make_algorithm(env, PolicyCfg(actor_hidden_dims=(16,), critic_hidden_dims=(16,)), algo_cfg, seed=0)
        stats = train(algorithm, env, 100)
        with torch.no_grad():
            means[coef] = float(algorithm.policy.act_inference(env.get_observations()).mean())
        assert ("bounds_loss" in stats[-1]) == (coef > 0)
    assert means[0.0] > 3.0, means
    assert 1.0 < means[1.0] < 1.8, means
