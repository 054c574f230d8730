from __future__ import annotations

import copy

import pytest
import torch

from canter.core.errors import CanterError, ConfigError
from canter.rl.config import AlgoCfg, DaggerCfg, PolicyCfg
from canter.rl.dagger import AggregatedDataset, Dagger
from canter.rl.factory import make_algorithm

from .fake_env import TargetEnv, deterministic_error, train


def target_expert(obs):
    """The optimal action of TargetEnv: a = x*, read from the first observation column."""
    return obs["policy"][:, :1].clone()


def dagger(env, expert=target_expert, seed=0, **dagger_overrides) -> Dagger:
    algo = AlgoCfg(algo="dagger", num_steps_per_env=8, num_learning_epochs=4, num_mini_batches=4,
                   learning_rate=3e-3, schedule="fixed", dagger=DaggerCfg(**dagger_overrides))
    policy = PolicyCfg(actor_hidden_dims=(32, 32), critic_hidden_dims=(8,))
    algorithm = make_algorithm(env, policy, algo, seed=seed, expert=expert)
    assert isinstance(algorithm, Dagger)
    return algorithm


def run(algorithm, env, iterations):
    obs = env.get_observations()
    stats, executed = [], []
    for _ in range(iterations):
        for _ in range(algorithm.cfg.num_steps_per_env):
            actions = algorithm.act(obs)
            executed.append((obs["policy"][:, 0].clone(), actions[:, 0].clone()))
            obs, rewards, terminated, truncated, extras = env.step(actions)
            algorithm.process_env_step(rewards, terminated, truncated, extras)
        algorithm.compute_returns(obs)
        stats.append(algorithm.update())
    return stats, executed


def test_beta_schedules():
    exponential = DaggerCfg(beta_initial=1.0, beta_decay=0.5, beta_min=0.05)
    assert [exponential.beta(i) for i in range(6)] == [1.0, 0.5, 0.25, 0.125, 0.0625, 0.05]
    linear = DaggerCfg(beta_schedule="linear", beta_initial=0.8, beta_min=0.0, beta_decay_iterations=4)
    assert [linear.beta(i) for i in range(6)] == pytest.approx([0.8, 0.6, 0.4, 0.2, 0.0, 0.0])
    with pytest.raises(ConfigError, match=r"algo\.dagger\.beta_min"):
        DaggerCfg(beta_initial=0.2, beta_min=0.5)


def test_dataset_is_fifo_and_keeps_rows_aligned():
    data = AggregatedDataset(5, {"x": (2,), "img": (1, 2, 2)}, 1, "cpu", {"img": torch.uint8})
    for start in (0, 3, 6):  # 3 rows per add: rows 0..8, the newest 5 (4..8) stay
        ids = torch.arange(start, start + 3, dtype=torch.float32)
        data.add({"x": ids[:, None].repeat(1, 2), "img": ids.to(torch.uint8).reshape(3, 1, 1, 1).repeat(1, 1, 2, 2)},
                 ids[:, None] * 10)
    assert data.size == 5 and data.observations["img"].dtype == torch.uint8
    assert sorted(data.labels[:, 0].tolist()) == [40, 50, 60, 70, 80]
    seen = []
    for obs, labels in data.mini_batches(2, 1, torch.Generator().manual_seed(0)):
        assert torch.equal(obs["x"][:, 0] * 10, labels[:, 0])  # every label next to its own observation
        assert torch.equal(obs["img"][:, 0, 0, 0].float() * 10, labels[:, 0])
        seen += labels[:, 0].tolist()
    assert sorted(seen) == [40, 50, 60, 70, 80]  # each row once per epoch


def test_expert_drives_with_beta_one_and_student_with_beta_zero():
    env = TargetEnv(num_envs=32, seed=1)
    algorithm = dagger(env, beta_initial=1.0, beta_decay=0.0)  # β_0 = 1, then 0
    stats, executed = run(algorithm, env, 2)
    first, second = executed[: algorithm.cfg.num_steps_per_env], executed[algorithm.cfg.num_steps_per_env :]
    assert all(torch.equal(target, action) for target, action in first)  # the expert acted
    assert float(stats[0]["expert_share"]) == 1.0 and float(stats[0]["beta"]) == 1.0
    assert float(stats[1]["expert_share"]) == 0.0 and float(stats[1]["beta"]) == 0.0
    assert not any(torch.equal(target, action) for target, action in second)  # the student acted
    # β = 0.5: about half of 8 × 32 steps are the expert's
    env = TargetEnv(num_envs=32, seed=1)
    half = dagger(env, beta_initial=0.5, beta_decay=1.0)
    share = float(run(half, env, 1)[0][0]["expert_share"])
    assert 0.4 < share < 0.6


def test_student_learns_the_expert_and_wrong_labels_are_caught():
    env = TargetEnv(num_envs=64, seed=2)
    algorithm = dagger(env)
    error_before = deterministic_error(algorithm)
    stats, _ = run(algorithm, env, 25)
    assert deterministic_error(algorithm) < 0.01 < error_before
    assert float(stats[-1]["imitation"]) < float(stats[0]["imitation"])
    # labels of the wrong envs (rolled by one env) carry no information about each env's target
    env = TargetEnv(num_envs=64, seed=2)
    shuffled = dagger(env, expert=lambda obs: target_expert(obs).roll(1, 0))
    run(shuffled, env, 25)
    assert deterministic_error(shuffled) > 0.2


def test_dagger_needs_an_expert_and_resumes_bitwise():
    env = TargetEnv(num_envs=8)
    with pytest.raises(ConfigError, match="needs an expert"):
        dagger(env, expert=None)
    env_a = TargetEnv(num_envs=16, seed=3)
    a = dagger(env_a, dataset_size=100)
    run(a, env_a, 2)
    saved_algo, saved_env = copy.deepcopy(a.state_dict()), copy.deepcopy(env_a.state_dict())
    run(a, env_a, 2)
    env_b = TargetEnv(num_envs=16, seed=99)
    b = dagger(env_b, seed=7, dataset_size=100)
    b.load_state_dict(saved_algo)
    env_b.load_state_dict(saved_env)
    run(b, env_b, 2)
    for pa, pb in zip(a.policy.parameters(), b.policy.parameters(), strict=True):
        assert torch.equal(pa, pb)
    assert a.iteration == b.iteration == 4


class ImageTargetEnv(TargetEnv):
    """TargetEnv whose target is shown only as an image: a bright square at column ⌊(x* + 1)·8⌋ of a
    1×8×20 uint8 frame (group "camera"), besides the progress in "policy"."""

    observation_dtypes = {"camera": torch.uint8}  # noqa: RUF012

    @property
    def observation_shapes(self):
        return {"policy": (1,), "camera": (1, 8, 20), "critic": (3,)}

    def get_observations(self):
        obs = super().get_observations()
        frame = torch.zeros(self.num_envs, 1, 8, 20, dtype=torch.uint8)
        column = ((self.target + 1.0) * 8).long().clamp(0, 15)
        frame[torch.arange(self.num_envs), 0, 2:6, column] = 255
        frame[torch.arange(self.num_envs), 0, 2:6, column + 1] = 255
        return {"policy": obs["policy"][:, 1:], "camera": frame, "critic": obs["critic"]}


@pytest.mark.parametrize("autocast", ["off", "bf16"])
def test_student_learns_from_pixels_with_a_cnn(autocast):
    from canter.rl.config import CnnCfg

    env = ImageTargetEnv(num_envs=64, seed=4)
    algo = AlgoCfg(algo="dagger", num_steps_per_env=8, num_learning_epochs=4, num_mini_batches=4,
                   learning_rate=3e-3, schedule="fixed", dagger=DaggerCfg(dataset_size=4096), autocast=autocast)
    policy = PolicyCfg(actor_hidden_dims=(32,), critic_hidden_dims=(8,), actor_obs_groups=("camera", "policy"),
                       image_obs_groups=("camera",),
                       cnn=CnnCfg(channels=(8,), kernel_sizes=(4,), strides=(2,), output_dim=32))
    expert = lambda obs: env.target[:, None].clone()  # noqa: E731 - the expert reads the full state
    algorithm = make_algorithm(env, policy, algo, seed=0, expert=expert)
    assert algorithm.dataset.observations["camera"].dtype == torch.uint8  # images kept as uint8
    convolutions = []
    conv = next(m for m in algorithm.policy.modules() if isinstance(m, torch.nn.Conv2d))
    conv.register_forward_hook(lambda module, args, out: convolutions.append(out.dtype) if torch.is_grad_enabled() else None)
    run(algorithm, env, 30)
    # the update's forward passes (with grad) ran their convolutions in the autocast dtype
    assert set(convolutions) == {torch.bfloat16 if autocast == "bf16" else torch.float32}
    algorithm.eval_mode()
    obs = env.get_observations()
    with torch.no_grad():
        error = (algorithm.policy.act_inference(obs)[:, 0] - env.target).abs()
    # the image resolves x* to 1/8: the student's error stays within about half a column
    assert float(error.mean()) < 0.1


def test_ppo_keeps_uint8_images_in_storage_and_updates():
    from canter.rl.config import CnnCfg

    env = ImageTargetEnv(num_envs=16, seed=5)
    policy = PolicyCfg(actor_hidden_dims=(16,), critic_hidden_dims=(16,), actor_obs_groups=("camera", "policy"),
                       critic_obs_groups=("critic",), image_obs_groups=("camera",),
                       cnn=CnnCfg(channels=(4,), kernel_sizes=(4,), strides=(2,), output_dim=8))
    algorithm = make_algorithm(env, policy, AlgoCfg(num_steps_per_env=4, num_mini_batches=2), seed=0)
    assert algorithm.storage.observations["camera"].dtype == torch.uint8
    before = [p.detach().clone() for p in algorithm.policy.encoders.parameters()]
    losses = train(algorithm, env, 2)[-1]
    assert all(torch.isfinite(v) for v in losses.values())
    assert any(not torch.equal(b, p) for b, p in zip(before, algorithm.policy.encoders.parameters(), strict=True))


def image_dagger(env, seed=0, **dagger_overrides) -> Dagger:
    from canter.rl.config import CnnCfg

    algo = AlgoCfg(algo="dagger", num_steps_per_env=8, num_learning_epochs=4, num_mini_batches=4,
                   learning_rate=3e-3, schedule="fixed", dagger=DaggerCfg(dataset_size=4096, **dagger_overrides))
    policy = PolicyCfg(actor_hidden_dims=(32,), critic_hidden_dims=(8,), actor_obs_groups=("camera", "policy"),
                       image_obs_groups=("camera",),
                       cnn=CnnCfg(channels=(8,), kernel_sizes=(4,), strides=(2,), output_dim=32))
    algorithm = make_algorithm(env, policy, algo, seed=seed, expert=lambda obs: env.target[:, None].clone())
    assert isinstance(algorithm, Dagger)
    return algorithm


def auxiliary_prediction(algorithm, obs):
    """The head's prediction of the auxiliary group in its own units (de-normalized)."""
    head = algorithm.auxiliary
    with torch.no_grad():
        normalized = head.head(algorithm.policy.encode(obs, algorithm.policy.actor_obs_groups))
    return normalized * torch.sqrt(head.normalizer.var + head.normalizer.epsilon) + head.normalizer.mean


def test_auxiliary_head_learns_a_privileged_group_from_pixels():
    # the student reads the image and t/T; the head regresses the critic group (x*, t/T, x*²), which
    # only the image can tell
    env = ImageTargetEnv(num_envs=64, seed=4)
    algorithm = image_dagger(env, auxiliary_group="critic")
    assert algorithm.dataset.observations["critic"].shape == (4096, 3)  # targets stored next to their frames
    stats, _ = run(algorithm, env, 30)
    assert float(stats[-1]["auxiliary"]) < 0.05 * float(stats[0]["auxiliary"])
    algorithm.eval_mode()
    obs = env.get_observations()
    predicted = auxiliary_prediction(algorithm, obs)
    assert float((predicted[:, 0] - env.target).abs().mean()) < 0.1  # x*, resolved to 1/8 by the image
    assert float((predicted[:, 2] - env.target.square()).abs().mean()) < 0.1
    assert torch.allclose(algorithm.auxiliary.normalizer.mean[0], torch.tensor(0.0), atol=0.1)  # x* ~ U(-1, 1)
    with torch.no_grad():
        error = (algorithm.policy.act_inference(obs)[:, 0] - env.target).abs()
    assert float(error.mean()) < 0.1  # and the student still imitates
    # the head is the learner's: the exported policy has the student's parameters only
    assert not any(name.startswith("auxiliary") for name, _ in algorithm.policy.named_parameters())


def test_auxiliary_targets_of_the_wrong_envs_are_not_learnt():
    # targets rolled by one env carry nothing about each env's image: the head cannot fit them
    class RolledTargets(ImageTargetEnv):
        def get_observations(self):
            obs = super().get_observations()
            return {**obs, "critic": obs["critic"].roll(1, 0)}

    env = RolledTargets(num_envs=64, seed=4)
    algorithm = image_dagger(env, auxiliary_group="critic")
    stats, _ = run(algorithm, env, 30)
    assert float(stats[-1]["auxiliary"]) > 0.5 * float(stats[0]["auxiliary"])


def test_auxiliary_head_resumes_bitwise_and_checks_its_config():
    env_a = ImageTargetEnv(num_envs=16, seed=3)
    a = image_dagger(env_a, auxiliary_group="critic")
    run(a, env_a, 2)
    saved_algo, saved_env = copy.deepcopy(a.state_dict()), copy.deepcopy(env_a.state_dict())
    stats_a, _ = run(a, env_a, 2)
    env_b = ImageTargetEnv(num_envs=16, seed=99)
    b = image_dagger(env_b, seed=7, auxiliary_group="critic")
    b.load_state_dict(saved_algo)
    env_b.load_state_dict(saved_env)
    stats_b, _ = run(b, env_b, 2)
    assert torch.equal(stats_a[-1]["auxiliary"], stats_b[-1]["auxiliary"])
    for pa, pb in zip(a._trainable.parameters(), b._trainable.parameters(), strict=True):
        assert torch.equal(pa, pb)
    assert torch.equal(a.auxiliary.normalizer.var, b.auxiliary.normalizer.var)
    # without the switch there is no head, no statistic and no extra dataset group
    plain_env = ImageTargetEnv(num_envs=16, seed=3)
    plain = image_dagger(plain_env)
    assert plain.auxiliary is None and "critic" not in plain.dataset.observations
    assert "auxiliary" not in run(plain, plain_env, 1)[0][0]
    with pytest.raises(CanterError, match="has no auxiliary head"):
        a.load_state_dict(plain.state_dict())
    with pytest.raises(CanterError, match="has an auxiliary head"):
        plain.load_state_dict(saved_algo)
    with pytest.raises(ConfigError, match=r"auxiliary_group: 'height' is not an observation group"):
        image_dagger(ImageTargetEnv(num_envs=4), auxiliary_group="height")
    with pytest.raises(ConfigError, match=r"auxiliary_group: 'camera' must be a 1-D group"):
        image_dagger(ImageTargetEnv(num_envs=4), auxiliary_group="camera")
    with pytest.raises(ConfigError, match=r"algo\.dagger\.auxiliary_coef"):
        DaggerCfg(auxiliary_coef=-1.0)
