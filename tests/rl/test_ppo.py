from __future__ import annotations

import copy

import pytest
import torch

from canter.core.errors import CanterError, ConfigError
from canter.core.rng import make_generator
from canter.rl.a2c import A2C
from canter.rl.config import AlgoCfg, PolicyCfg
from canter.rl.distributed import all_reduce_gradients
from canter.rl.factory import make_algorithm
from canter.rl.losses import adaptive_learning_rate, bounds_loss, clipped_surrogate_loss, value_loss
from canter.rl.modules import ActorCritic
from canter.rl.ppo import PPO

from .fake_env import TargetEnv, deterministic_error, train


def small_policy_cfg(**overrides) -> PolicyCfg:
    return PolicyCfg(actor_hidden_dims=(32, 32), critic_hidden_dims=(32, 32), **overrides)


def small_algo_cfg(**overrides) -> AlgoCfg:
    defaults = {"num_steps_per_env": 8, "num_learning_epochs": 2, "num_mini_batches": 2}
    return AlgoCfg(**(defaults | overrides))


def parameters(algorithm) -> list[torch.Tensor]:
    return [p.detach().clone() for p in algorithm.policy.parameters()]


def test_adaptive_learning_rate_rule():
    lr = torch.tensor(1e-3)

    def rule(kl: float) -> float:
        return float(adaptive_learning_rate(lr, torch.tensor(kl), 0.01, 1e-5, 1e-2))

    assert rule(0.03) == pytest.approx(1e-3 / 1.5)  # KL > 2·0.01
    assert rule(0.004) == pytest.approx(1e-3 * 1.5)  # 0 < KL < 0.01/2
    assert rule(0.01) == pytest.approx(1e-3)
    assert rule(0.0) == pytest.approx(1e-3)
    assert float(adaptive_learning_rate(torch.tensor(9e-3), torch.tensor(0.0001), 0.01, 1e-5, 1e-2)) == (
        pytest.approx(1e-2)
    )  # clamped


def test_clipped_losses_by_hand():
    # ratios e^0 = 1 and e^{ln 2} = 2 (clipped to 1.2); advantages 1 and 3
    log_prob = torch.tensor([0.0, torch.log(torch.tensor(2.0)).item()])
    loss = clipped_surrogate_loss(log_prob, torch.zeros(2), torch.tensor([1.0, 3.0]), 0.2)
    # max(-1·1, -1·1) = -1;  max(-3·2, -3·1.2) = -3.6;  mean = -2.3
    torch.testing.assert_close(loss, torch.tensor(-2.3))
    values, old_values, returns = torch.tensor([1.0, 0.0]), torch.tensor([0.0, 0.0]), torch.tensor([1.0, 2.0])
    # unclipped: (1-1)² = 0, (2-0)² = 4; clipped V: 0.2, 0: (1-0.2)² = 0.64, 4 → max: 0.64, 4 → mean 2.32
    torch.testing.assert_close(value_loss(values, old_values, returns, 0.2, True), torch.tensor(2.32))
    torch.testing.assert_close(value_loss(values, old_values, returns, 0.2, False), torch.tensor(2.0))


@pytest.mark.parametrize("rnn_type", ["none", "gru"])
def test_same_seed_same_parameters_different_seed_different(rnn_type):
    def run(seed: int) -> list[torch.Tensor]:
        env = TargetEnv(8, seed=0)
        policy_cfg = small_policy_cfg(normalize_obs=True, rnn_type=rnn_type, rnn_hidden_dim=8)
        algorithm = make_algorithm(env, policy_cfg, small_algo_cfg(), seed=seed)
        train(algorithm, env, 3)
        return parameters(algorithm)

    first, again, other = run(seed=1), run(seed=1), run(seed=2)
    assert all(torch.equal(a, b) for a, b in zip(first, again, strict=True))
    assert not any(torch.equal(a, c) for a, c in zip(first, other, strict=True) if a.numel() > 1)


@pytest.mark.parametrize("algo", ["ppo", "a2c"])
def test_state_dict_round_trip_restores_everything(algo):
    env = TargetEnv(8, seed=0)
    policy_cfg = small_policy_cfg(normalize_obs=True)
    algo_cfg = small_algo_cfg(algo=algo, schedule="adaptive")
    trained = make_algorithm(env, policy_cfg, algo_cfg, seed=0)
    train(trained, env, 2)
    state = copy.deepcopy(trained.state_dict())
    env_state = copy.deepcopy(env.state_dict())
    assert set(state) == {"algo", "policy", "optimizer", "learning_rate", "generator"}

    restored = make_algorithm(TargetEnv(8, seed=5), policy_cfg, algo_cfg, seed=9)
    assert not torch.equal(restored.policy.actor[0].weight, trained.policy.actor[0].weight)
    restored.load_state_dict(state)

    for a, b in zip(trained.policy.parameters(), restored.policy.parameters(), strict=True):
        assert torch.equal(a, b)
    for group in ("policy", "critic"):
        for name in ("mean", "var", "count"):
            trained_buffer = getattr(trained.policy.normalizers[group], name)
            assert torch.equal(trained_buffer, getattr(restored.policy.normalizers[group], name))
        assert int(restored.policy.normalizers[group].count) > 0
    assert torch.equal(restored.learning_rate, trained.learning_rate)
    assert all(g["lr"] is restored.learning_rate for g in restored.optimizer.param_groups)
    trained_optimizer, restored_optimizer = trained.optimizer.state_dict(), restored.optimizer.state_dict()
    for index, moments in trained_optimizer["state"].items():
        for key in ("step", "exp_avg", "exp_avg_sq"):
            assert torch.equal(moments[key], restored_optimizer["state"][index][key])

    # continuing from the checkpoint is identical to continuing the original
    train(trained, env, 1)
    env_copy = TargetEnv(8, seed=5)
    env_copy.load_state_dict(env_state)
    train(restored, env_copy, 1)
    for a, b in zip(trained.policy.parameters(), restored.policy.parameters(), strict=True):
        assert torch.equal(a, b)


def test_load_rejects_other_algorithm():
    env = TargetEnv(4)
    ppo = make_algorithm(env, small_policy_cfg(), small_algo_cfg(), seed=0)
    a2c = make_algorithm(env, small_policy_cfg(), small_algo_cfg(algo="a2c"), seed=0)
    assert isinstance(ppo, PPO) and isinstance(a2c, A2C)
    with pytest.raises(CanterError, match="a2c"):
        ppo.load_state_dict(a2c.state_dict())
    policy = ActorCritic(
        env.observation_shapes, 1, small_policy_cfg(), init_generator=make_generator(0, "cpu")
    )
    with pytest.raises(ConfigError, match=r"algo\.algo"):
        PPO(policy, small_algo_cfg(algo="a2c"), num_envs=4, device="cpu", generator=make_generator(0, "cpu"))


def test_bound_loss_by_hand():
    mean = torch.tensor([[0.5, 1.6, -2.1], [0.0, 0.0, 1.1]], requires_grad=True)
    loss = bounds_loss(mean, 1.1)
    # row 0: 0 + (1.6 - 1.1)² + (2.1 - 1.1)² = 1.25; row 1: inside the bounds, 0; mean over rows 0.625
    torch.testing.assert_close(loss, torch.tensor(0.625))
    loss.backward()
    # d/dμ = 2 (|μ| - 1.1) sign(μ) / 2 rows outside, 0 inside
    torch.testing.assert_close(mean.grad, torch.tensor([[0.0, 0.5, -1.0], [0.0, 0.0, 0.0]]))


def test_ppo_adds_the_bound_loss_only_when_asked():
    env = TargetEnv(8)
    asked = make_algorithm(env, small_policy_cfg(), small_algo_cfg(schedule="fixed", bounds_loss_coef=0.5), seed=0)
    assert asked.bounds_coef == 0.5 and "bounds_loss" in train(asked, env, 1)[0]
    default = make_algorithm(env, small_policy_cfg(), small_algo_cfg(schedule="fixed"), seed=0)
    assert default.bounds_coef == 0.0


def test_update_returns_tensor_statistics_and_reduce_gradients_is_a_no_op():
    env = TargetEnv(8)
    algorithm = make_algorithm(env, small_policy_cfg(), small_algo_cfg(schedule="fixed"), seed=0)
    stats = train(algorithm, env, 1)[0]
    assert set(stats) == {"surrogate_loss", "value_loss", "entropy", "kl", "grad_norm", "learning_rate"}
    assert all(isinstance(v, torch.Tensor) and v.dim() == 0 for v in stats.values())
    assert float(stats["learning_rate"]) == pytest.approx(1e-3)  # fixed schedule
    assert algorithm.storage.step == 0
    grads = [torch.ones_like(p) for p in algorithm.policy.parameters()]
    for p, g in zip(algorithm.policy.parameters(), grads, strict=True):
        p.grad = g
    all_reduce_gradients(algorithm.policy.parameters())  # what every gradient step calls
    assert all(p.grad is g for p, g in zip(algorithm.policy.parameters(), grads, strict=True))


def test_ppo_learns_the_target_task():
    env = TargetEnv(64, seed=1)
    algo_cfg = AlgoCfg(num_steps_per_env=16)  # 5 epochs x 4 minibatches, adaptive lr
    algorithm = make_algorithm(env, small_policy_cfg(normalize_obs=True), algo_cfg, seed=0)
    initial_error = deterministic_error(algorithm)
    assert initial_error > 0.25  # μ ≈ 0 at init: E[x*²] = 1/3
    stats = train(algorithm, env, 8)
    final_error = deterministic_error(algorithm)
    assert final_error < 0.02, (initial_error, final_error)
    assert float(stats[-1]["entropy"]) < float(stats[0]["entropy"])  # σ shrank


@pytest.mark.parametrize("algo", ["ppo", "a2c"])
def test_compile_switch_changes_nothing_but_speed(monkeypatch, algo):
    """cfg.compile traces the whole minibatch step (forward, losses, backward, clip, optimizer step),
    GAE and the policy's act; three iterations from the same seed end with the same parameters,
    statistics and learning rate as eager. The aot_eager backend runs the traced graphs with eager
    kernels (inductor's codegen would add ~20 s here and reorder float sums), so the equality is bitwise."""
    compiled = []
    real_compile = torch.compile

    def recording_compile(function, **kwargs):
        compiled.append(getattr(function, "__name__", str(function)))
        return real_compile(function, **kwargs)

    monkeypatch.setattr(torch, "compile", recording_compile)
    runs = {}
    for switch in (False, True):
        env = TargetEnv(8)
        cfg = small_algo_cfg(algo=algo, compile=switch, compile_backend="aot_eager")
        algorithm = make_algorithm(env, small_policy_cfg(), cfg, seed=0)
        runs[switch] = (train(algorithm, env, 3), parameters(algorithm), algorithm.learning_rate.clone())
    assert set(compiled) == {"_learn_step", "compute_gae", "_act_and_evaluate"}
    (eager_stats, eager_params, eager_lr), (compiled_stats, compiled_params, compiled_lr) = runs[False], runs[True]
    for a, b in zip(eager_params, compiled_params, strict=True):
        assert torch.equal(a, b)
    for a, b in zip(eager_stats, compiled_stats, strict=True):
        assert a.keys() == b.keys()
        for key in a:
            assert torch.equal(a[key], b[key]), key
    assert torch.equal(eager_lr, compiled_lr)




def test_cuda_graph_switch_is_refused_where_it_cannot_run():
    """algo.cuda_graph (canter.rl.cuda_graph; its equality with eager is a GPU test in tests/gpu) names
    its problem on a CPU device, together with compile, and for the learners it is not built for."""
    env = TargetEnv(8)
    with pytest.raises(ConfigError, match=r"algo.cuda_graph: CUDA graphs need a CUDA device; this run is on cpu"):
        make_algorithm(env, small_policy_cfg(), small_algo_cfg(cuda_graph=True), seed=0)
    with pytest.raises(ConfigError, match=r"cuda_graph.*compile"):
        small_algo_cfg(cuda_graph=True, compile=True).validate()
    with pytest.raises(ConfigError, match=r"algo.cuda_graph: implemented for ppo and a2c, not 'dagger'"):
        make_algorithm(env, small_policy_cfg(), AlgoCfg(algo="dagger", schedule="fixed", cuda_graph=True), seed=0,
                       expert=lambda obs: obs["policy"][:, :1])
    from canter.rl.cuda_graph import GraphedFunction

    with pytest.raises(ConfigError, match="CUDA graphs need a CUDA device"):
        GraphedFunction(lambda x: x, name="f", device=torch.device("cpu"))
