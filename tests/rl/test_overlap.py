"""Overlapped collection and learning (RunnerCfg.overlap): the lag, its correction, determinism, resume."""

from __future__ import annotations

import pytest
import torch

from canter.cli.main import entrypoint
from canter.cli.train_cmd import train_main
from canter.core.errors import ConfigError
from canter.rl.algorithm import DECOUPLED_WEIGHT_MAX
from canter.rl.checkpoint import load_checkpoint
from canter.rl.losses import clipped_surrogate_loss, policy_gradient_loss
from canter.rl.runner import _RolloutSums
from tests.rl.test_runner import SMALL, _cartpole_runner, _flatten, _same

OVERLAP = ["--agent.overlap"]


def _expected_gradients(logits: torch.Tensor, behaviour: torch.Tensor, advantages: torch.Tensor):
    """The gradients of three losses at `logits`, in expectation over actions drawn from `behaviour`
    (the lagged policy), computed exactly: a batch holding each action in proportion to its
    behaviour probability (the probabilities are multiples of 1/8)."""
    counts = (behaviour * 8).round().long()
    assert torch.equal(counts.double() / 8, behaviour)
    actions = torch.repeat_interleave(torch.arange(len(behaviour)), counts)

    def gradient(loss_of) -> torch.Tensor:
        theta = logits.clone().requires_grad_(True)
        log_prob = torch.log_softmax(theta, -1)
        loss_of(log_prob).backward()
        assert theta.grad is not None
        return theta.grad

    # the on-policy objective -E_π[A(a)], exactly
    on_policy = gradient(lambda log_prob: -(log_prob.exp() * advantages).sum())
    # PPO's surrogate on the lagged samples: the ratio π/μ to the stored log-probabilities
    corrected = gradient(lambda log_prob: clipped_surrogate_loss(log_prob[actions], behaviour.log()[actions],
                                                                 advantages[actions], clip_param=0.2))
    # the same samples without the correction (an A2C loss as if they were on-policy)
    uncorrected = gradient(lambda log_prob: policy_gradient_loss(log_prob[actions], advantages[actions]))
    return on_policy, corrected, uncorrected


def test_the_ratio_corrects_one_update_of_lag_in_expectation():
    """A 3-armed bandit with known advantages. The learner's policy π (logits below) is one update
    ahead of the behaviour policy μ = (1/2, 1/4, 1/4) that collected the samples, by less than the
    clip range. In expectation over μ, the gradient of PPO's surrogate equals the on-policy policy
    gradient ∇ Σ_a π(a) A(a) exactly; the loss that ignores the lag does not."""
    behaviour = torch.tensor([0.5, 0.25, 0.25], dtype=torch.float64)
    advantages = torch.tensor([1.0, -2.0, 3.0], dtype=torch.float64)
    logits = behaviour.log() + torch.tensor([0.05, -0.08, 0.1], dtype=torch.float64)  # one small update later
    ratio = torch.softmax(logits, -1) / behaviour
    assert torch.all((ratio - 1).abs() < 0.2)  # inside the clip range: the surrogate is unclipped
    on_policy, corrected, uncorrected = _expected_gradients(logits, behaviour, advantages)
    # hand-checked: ∂/∂z_j of -Σ_a π_a A_a = -π_j (A_j - Σ_a π_a A_a)
    pi = torch.softmax(logits, -1)
    assert torch.allclose(on_policy, -pi * (advantages - (pi * advantages).sum()), atol=1e-12)
    assert torch.allclose(corrected, on_policy, atol=1e-12)
    assert (uncorrected - on_policy).abs().max() > 0.01  # 0.049 here: the lag biases the plain loss


def test_with_no_lag_both_losses_agree():
    behaviour = torch.tensor([0.5, 0.25, 0.25], dtype=torch.float64)
    advantages = torch.tensor([1.0, -2.0, 3.0], dtype=torch.float64)
    on_policy, corrected, uncorrected = _expected_gradients(behaviour.log(), behaviour, advantages)
    assert torch.allclose(corrected, on_policy, atol=1e-12)
    assert torch.allclose(uncorrected, on_policy, atol=1e-12)


def test_the_decoupled_objective_keeps_the_trust_region_around_the_learner():
    """Hilton et al.'s decoupled objective as the learner folds it in (decouple_from_behaviour): the
    ratio is taken to the proximal policy π_prox (the learner's before its update) and the advantage
    is weighted by w = π_prox/μ. Here π_prox has already left μ's clip range on the best arm (the
    previous update), and π is one small step beyond π_prox. PPO's surrogate measured from μ clips that
    arm (no gradient for it) and is biased; the decoupled one gives the exact on-policy gradient."""
    behaviour = torch.tensor([0.5, 0.25, 0.25], dtype=torch.float64)
    advantages = torch.tensor([1.0, -2.0, 3.0], dtype=torch.float64)
    proximal = torch.softmax(behaviour.log() + torch.tensor([-0.1, -0.2, 0.3], dtype=torch.float64), -1)
    assert proximal[2] / behaviour[2] > 1.2  # outside μ's clip range (ε = 0.2) on the third arm
    logits = proximal.log() + torch.tensor([0.02, -0.03, 0.04], dtype=torch.float64)
    assert torch.all((torch.softmax(logits, -1) / proximal - 1).abs() < 0.2)  # inside π_prox's
    weight = proximal / behaviour
    assert weight.max() < DECOUPLED_WEIGHT_MAX  # not truncated
    on_policy, from_behaviour, _ = _expected_gradients(logits, behaviour, advantages)
    counts = (behaviour * 8).round().long()
    actions = torch.repeat_interleave(torch.arange(3), counts)
    theta = logits.clone().requires_grad_(True)
    log_prob = torch.log_softmax(theta, -1)
    clipped_surrogate_loss(log_prob[actions], proximal.log()[actions], (weight * advantages)[actions],
                           clip_param=0.2).backward()
    assert theta.grad is not None
    assert torch.allclose(theta.grad, on_policy, atol=1e-12)
    assert (from_behaviour - on_policy).abs().max() > 0.5  # 0.82 here: the clip around μ cut the best arm


def test_decoupling_weights_the_advantages_and_anchors_the_ratio_and_kl_at_the_learner(tmp_path):
    runner = _cartpole_runner(tmp_path / "run", max_iterations=1)
    learner = runner.algorithm
    obs = runner.env.reset()[0]
    learner.train_mode()
    runner._collect(obs, learner, _RolloutSums(runner.env.device))
    storage = learner.storage
    behaviour = storage.log_probs.clone()
    advantages = storage.advantages.clone()
    # with no lag, decoupling changes nothing
    learner.decouple_from_behaviour()
    assert torch.allclose(storage.log_probs, behaviour, atol=1e-6)
    assert torch.allclose(storage.advantages, advantages, atol=1e-5)
    # one step later the learner's own policy is the proximal one
    with torch.no_grad():
        for param in learner.policy.parameters():
            param.add_(0.05 * torch.randn(param.shape, generator=torch.Generator().manual_seed(3)))
        flat = {group: o.flatten(0, 1) for group, o in storage.observations.items()}
        mean, std = learner.policy.action_distribution(flat)
        proximal = learner.policy.log_prob(storage.actions.flatten(0, 1), mean, std).view_as(behaviour)
    storage.log_probs.copy_(behaviour)
    learner.decouple_from_behaviour()
    weight = torch.exp(proximal - behaviour).clamp(max=DECOUPLED_WEIGHT_MAX)
    assert (weight - 1).abs().max() > 0.05
    assert torch.allclose(storage.log_probs, proximal, atol=1e-6)
    assert torch.allclose(storage.advantages, advantages * weight, atol=1e-5)
    assert torch.allclose(storage.action_mean.flatten(0, 1), mean, atol=1e-6)
    # the adaptive schedule's KL at the first minibatch is zero: it measures this update only
    batch = next(learner._mini_batches(1, 1))
    new_mean, new_std, _ = learner._forward(batch)
    assert learner.policy.kl(batch.old_mean, batch.old_std, new_mean, new_std).abs().max() < 1e-6


def test_the_learner_learns_from_the_rollout_its_previous_policy_collected(tmp_path):
    runner = _cartpole_runner(tmp_path / "run", max_iterations=3)
    runner.cfg.overlap = True
    runner._actor = runner._make_actor()
    learner, actor = runner.algorithm, runner._actor
    obs = runner.env.reset()[0]
    learner.train_mode()
    before = [p.detach().clone() for p in learner.policy.parameters()]
    obs, stats = runner.run_iteration(obs)  # collects twice (nothing to learn from at first), learns once
    runner.iteration += 1
    transitions = runner.env.num_envs * learner.cfg.num_steps_per_env
    assert runner.env_steps == 2 * transitions
    assert stats["total_fps"] > 0 and runner._pending
    # the actor now acts with the learner's new parameters ...
    after = list(learner.policy.parameters())
    assert not all(torch.equal(a, b) for a, b in zip(before, after, strict=True))
    assert all(torch.equal(a, b) for a, b in zip(after, actor.policy.parameters(), strict=True))
    # ... while the rollout the learner holds was collected, during the update, by the parameters before it
    storage = learner.storage
    assert storage.step == learner.cfg.num_steps_per_env
    with torch.no_grad():
        flat = {group: o.flatten(0, 1) for group, o in storage.observations.items()}
        actions = storage.actions.flatten(0, 1)
        mean, std = learner.policy.action_distribution(flat)
        now = learner.policy.log_prob(actions, mean, std)
        for param, old in zip(learner.policy.parameters(), before, strict=True):
            param.copy_(old)
        mean, std = learner.policy.action_distribution(flat)
        then = learner.policy.log_prob(actions, mean, std)
    stored = storage.log_probs.flatten(0, 1)
    assert torch.allclose(then, stored, atol=1e-5)
    assert (now - stored).abs().max() > 1e-3


def test_overlapped_runs_are_deterministic_and_resume_bitwise(tmp_path):
    a = load_checkpoint(_run(tmp_path / "a", 4))
    b = load_checkpoint(_run(tmp_path / "b", 4))
    assert _same(a, b)
    assert a["env_steps"] == 5 * 64 * 16  # a first collection, then one per iteration (cartpole: 16 steps)
    split = _run(tmp_path / "split", 2)
    pending = load_checkpoint(split)["ranks"][0]["pending_rollout"]
    assert pending is not None and pending["step"] == 16  # the rollout not yet learnt from is saved
    assert train_main(["cartpole", "--resume", str(tmp_path / "split"), "--max-iterations", "4"]) == 0
    resumed = load_checkpoint(split)
    assert _same(a, resumed)
    assert resumed["env_steps"] == a["env_steps"] and len(resumed["history"]) == 4
    for (key, x), (_, y) in zip(_flatten(a["ranks"][0]["pending_rollout"]),
                                _flatten(resumed["ranks"][0]["pending_rollout"]), strict=True):
        assert torch.equal(x, y), key
    # an overlapped run is not the serial one: its updates learn from data one update old
    serial = load_checkpoint(_run(tmp_path / "serial", 4, overlap=False))
    assert not _same(a, serial)
    assert serial["ranks"][0]["pending_rollout"] is None and serial["env_steps"] == 4 * 64 * 16


def _run(run_dir, iterations: int, overlap: bool = True):
    assert train_main(["cartpole", "--run-dir", str(run_dir), *SMALL, "--max-iterations", str(iterations),
                       *(OVERLAP if overlap else [])]) == 0
    return run_dir / "checkpoint.pt"


@pytest.mark.parametrize(("extra", "words"), [
    (("--algo", "a2c"), "needs PPO"),
    (("--agent.policy.rnn-type", "gru", "--agent.policy.rnn-hidden-dim", "8"), "feed-forward"),
])
def test_overlap_refuses_what_it_cannot_correct_in_one_line(tmp_path, capsys, extra, words):
    with pytest.raises(SystemExit) as exit_:
        entrypoint(["train", "cartpole", "--run-dir", str(tmp_path / "r"), *SMALL, "--max-iterations", "1",
                    *OVERLAP, *extra])
    assert exit_.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "agent.overlap" in err and words in err


def test_a_config_error_is_raised_by_the_runner(tmp_path):
    runner = _cartpole_runner(tmp_path / "run", max_iterations=1)
    runner.cfg.algo.cuda_graph = True
    with pytest.raises(ConfigError, match="cuda_graph"):
        runner._make_actor()
