"""Symmetry augmentation and the mirror loss in PPO: the augmented minibatch and the loss by hand,
the loss making a policy symmetric on a problem whose mirror is known (TargetEnv: x* -> -x*,
a -> -a), augmentation still learning it, and one-line errors where a mirror is missing."""

from __future__ import annotations

import pytest
import torch

from canter.core.errors import ConfigError
from canter.core.mirror import Mirror
from canter.rl.factory import make_algorithm
from canter.rl.storage import MiniBatch
from canter.rl.symmetry import augment, first_rows, mirror_loss

from .fake_env import TargetEnv, deterministic_error, train
from .test_ppo import small_algo_cfg, small_policy_cfg


class MirroredTargetEnv(TargetEnv):
    """TargetEnv with its mirror declared: the target and the action flip sign; the episode progress
    and x*² do not."""

    def symmetry(self) -> tuple[dict[str, Mirror], Mirror]:
        def m(index: list[int], sign: list[float]) -> Mirror:
            return Mirror(torch.tensor(index), torch.tensor(sign))

        return {"policy": m([0, 1], [-1.0, 1.0]), "critic": m([0, 1, 2], [-1.0, 1.0, 1.0])}, m([0], [-1.0])


def test_augmented_minibatch_by_hand():
    batch = MiniBatch(
        observations={"policy": torch.tensor([[1.0, 2.0, 3.0]])},
        actions=torch.tensor([[0.5, -0.25]]),
        old_log_prob=torch.tensor([-1.5]),
        old_mean=torch.tensor([[0.4, -0.2]]),
        old_std=torch.tensor([[0.1, 0.3]]),
        old_values=torch.tensor([2.0]),
        returns=torch.tensor([2.5]),
        advantages=torch.tensor([0.7]),
    )
    # observations: (x, y, z) -> (x, -y, z) in the order (0, 1, 2); actions: the two trade places, one negated
    observations = {"policy": Mirror(torch.tensor([0, 1, 2]), torch.tensor([1.0, -1.0, 1.0]))}
    actions = Mirror(torch.tensor([1, 0]), torch.tensor([-1.0, 1.0]))
    out = augment(batch, observations, actions)
    assert out.observations["policy"].tolist() == [[1.0, 2.0, 3.0], [1.0, -2.0, 3.0]]
    assert out.actions.tolist() == [[0.5, -0.25], [0.25, 0.5]]
    torch.testing.assert_close(out.old_mean, torch.tensor([[0.4, -0.2], [0.2, 0.4]]))
    torch.testing.assert_close(out.old_std, torch.tensor([[0.1, 0.3], [0.3, 0.1]]))  # permuted, never negated
    for name in ("old_log_prob", "old_values", "returns", "advantages"):
        assert getattr(out, name).tolist() == [getattr(batch, name)[0].item()] * 2
    assert first_rows(out, 1).actions.tolist() == batch.actions.tolist()


def test_mirror_loss_by_hand():
    actions = Mirror(torch.tensor([1, 0]), torch.tensor([-1.0, 1.0]))
    mean = torch.tensor([[1.0, 2.0]], requires_grad=True)
    mirrored_mean = torch.tensor([[-1.0, 1.5]], requires_grad=True)
    # mirror(mean) = (-2, 1); |(-1, 1.5) - (-2, 1)|² = 1 + 0.25
    loss = mirror_loss(mean, mirrored_mean, actions)
    assert loss.item() == pytest.approx(1.25)
    loss.backward()
    assert mean.grad is None or bool((mean.grad == 0).all())  # the target is held fixed
    assert mirrored_mean.grad is not None
    torch.testing.assert_close(mirrored_mean.grad, torch.tensor([[2.0, 1.0]]))


def _asymmetry(algorithm) -> float:
    """E |μ(x*) + μ(-x*)| over x* in [-1, 1]: 0 for a policy that mirrors (an odd function)."""
    target = torch.linspace(-1.0, 1.0, 41)
    progress = torch.full_like(target, 0.4)
    algorithm.eval_mode()
    with torch.no_grad():
        plus = algorithm.policy.act_inference({"policy": torch.stack([target, progress], -1),
                                               "critic": torch.stack([target, progress, target.square()], -1)})
        minus = algorithm.policy.act_inference({"policy": torch.stack([-target, progress], -1),
                                                "critic": torch.stack([-target, progress, target.square()], -1)})
    algorithm.train_mode()
    return float((plus + minus).abs().mean())


def test_mirror_loss_makes_the_policy_symmetric_and_augmentation_still_learns():
    results = {}
    for mode in ("off", "loss", "augment"):
        env = MirroredTargetEnv(32, seed=0)
        algorithm = make_algorithm(env, small_policy_cfg(), small_algo_cfg(symmetry=mode, symmetry_loss_coef=10.0), seed=3)
        stats = train(algorithm, env, 10)
        results[mode] = (_asymmetry(algorithm), deterministic_error(algorithm), stats[-1])
    assert "symmetry_loss" in results["loss"][2] and "symmetry_loss" not in results["augment"][2]
    # measured: asymmetry off 0.139, loss 0.0028; error (μ - x*)² off 0.010, loss 0.003, augment 0.008
    assert results["loss"][0] < 0.1 * results["off"][0]
    assert results["loss"][1] < 0.05 and results["augment"][1] < 0.05


def test_symmetry_needs_a_declared_mirror_and_a_feed_forward_gaussian_policy():
    with pytest.raises(ConfigError, match="declares no left-right mirror"):
        make_algorithm(TargetEnv(8), small_policy_cfg(), small_algo_cfg(symmetry="augment"), seed=0)
    with pytest.raises(ConfigError, match="feed-forward Gaussian policy"):
        make_algorithm(MirroredTargetEnv(8), small_policy_cfg(rnn_type="gru", rnn_hidden_dim=8),
                       small_algo_cfg(symmetry="loss"), seed=0)
    with pytest.raises(ConfigError, match="implemented for ppo"):
        make_algorithm(MirroredTargetEnv(8), small_policy_cfg(), small_algo_cfg(algo="a2c", symmetry="loss"), seed=0)
    env = MirroredTargetEnv(8, with_critic_group=False)
    env.symmetry = lambda: ({}, Mirror(torch.tensor([0]), torch.tensor([-1.0])))  # type: ignore[method-assign]
    with pytest.raises(ConfigError, match=r"group\(s\) .*policy have a term without a mirror"):
        make_algorithm(env, small_policy_cfg(), small_algo_cfg(symmetry="both"), seed=0)


def test_the_dog_trains_with_symmetry_and_logs_the_mirror_loss(tmp_path):
    from canter.cli.train_cmd import train_main

    from .test_runner import _scalars

    run = tmp_path / "dog"
    argv = ["dog-flat", "--num-envs", "16", "--max-iterations", "2", "--agent.algo.symmetry", "both",
            "--agent.algo.num-steps-per-env", "8", "--run-dir", str(run), "--quiet"]
    assert train_main(argv) == 0
    losses = _scalars(run, "Loss/symmetry_loss")["Loss/symmetry_loss"]
    assert len(losses) == 2 and all(value > 0.0 for _, value in losses)
