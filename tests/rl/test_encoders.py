from __future__ import annotations

import pytest
import torch

from canter.core.errors import ConfigError
from canter.core.rng import make_generator
from canter.rl.config import CnnCfg, PolicyCfg
from canter.rl.encoders import ImageEncoder, _input_dtype, conv_output_shape
from canter.rl.modules import ActorCritic
from canter.rl.normalizer import EmpiricalNormalizer


def test_nature_cnn_output_shapes():
    # Nature DQN: 84 -> (84-8)/4+1 = 20 -> (20-4)/2+1 = 9 -> 9-3+1 = 7; 64 -> 15 -> 6 -> 4
    assert conv_output_shape((4, 84, 84), CnnCfg()) == (64, 7, 7)
    assert conv_output_shape((1, 64, 64), CnnCfg()) == (64, 4, 4)


def test_cnn_cfg_errors_name_the_field():
    with pytest.raises(ConfigError, match="one entry per layer"):
        CnnCfg(channels=(32, 64), kernel_sizes=(8,), strides=(4,))
    with pytest.raises(ConfigError, match=r"policy\.cnn\.strides"):
        CnnCfg(strides=(4, 0, 1))


def test_image_too_small_for_stack():
    with pytest.raises(ValueError, match="too small"):
        ImageEncoder((1, 16, 16), CnnCfg(), generator=make_generator(0, "cpu"))


def test_uint8_images_are_scaled_to_unit_range():
    encoder = ImageEncoder((3, 36, 36), CnnCfg(output_dim=8), generator=make_generator(0, "cpu"))
    raw = torch.randint(0, 256, (5, 3, 36, 36), dtype=torch.uint8, generator=torch.Generator().manual_seed(1))
    assert torch.equal(encoder(raw), encoder(raw.float() / 255.0))
    # leading dims are kept: (T, n, C, H, W) -> (T, n, D)
    assert encoder(raw.reshape(1, 5, 3, 36, 36)).shape == (1, 5, 8)


def _shapes():
    return {"wrist": (3, 36, 36), "proprio": (7,), "critic": (12,)}


def test_image_group_needs_a_cnn():
    cfg = PolicyCfg(actor_obs_groups=("wrist", "proprio"), critic_obs_groups=("critic",))
    with pytest.raises(ConfigError, match=r"'wrist' is an image .*policy\.image_obs_groups"):
        ActorCritic(_shapes(), 4, cfg, init_generator=make_generator(0, "cpu"))
    bad = PolicyCfg(actor_obs_groups=("proprio",), image_obs_groups=("proprio",))
    with pytest.raises(ConfigError, match="'proprio' is not an image"):
        ActorCritic({"proprio": (7,)}, 4, bad, init_generator=make_generator(0, "cpu"))


@pytest.mark.parametrize("shared", [True, False])
def test_actor_critic_with_image_group(shared):
    cfg = PolicyCfg(actor_hidden_dims=(16,), critic_hidden_dims=(16,), actor_obs_groups=("wrist", "proprio"),
                    critic_obs_groups=("wrist", "critic"), image_obs_groups=("wrist",), normalize_obs=True,
                    cnn=CnnCfg(output_dim=10, shared=shared))
    policy = ActorCritic(_shapes(), 4, cfg, init_generator=make_generator(0, "cpu"))
    # image groups are never normalized; vector groups are
    assert not isinstance(policy.normalizers["wrist"], EmpiricalNormalizer)
    assert isinstance(policy.normalizers["proprio"], EmpiricalNormalizer)
    assert sorted(policy.encoders.keys()) == (["wrist"] if shared else ["actor:wrist", "critic:wrist"])
    assert policy.actor[0].in_features == 10 + 7 and policy.critic[0].in_features == 10 + 12
    g = torch.Generator().manual_seed(0)
    obs = {"wrist": torch.randint(0, 256, (6, 3, 36, 36), dtype=torch.uint8, generator=g),
           "proprio": torch.randn(6, 7, generator=g), "critic": torch.randn(6, 12, generator=g)}
    policy.update_normalization(obs)
    mean, _std, values = policy.forward_train(obs)
    assert mean.shape == (6, 4) and values.shape == (6,)
    # the CNN learns: gradients reach the first conv layer of the actor's encoder
    mean.sum().backward()
    first_conv = policy.encoders["wrist" if shared else "actor:wrist"].net[0]
    assert first_conv.weight.grad is not None and first_conv.weight.grad.abs().sum() > 0


def test_channels_last_backward_pass_computes_the_nchw_values():
    """A 4-channel encoder takes channels-last input when it will be differentiated (a faster weight
    gradient on the CPU): its features and its parameters' gradients match the NCHW computation's."""
    encoder = ImageEncoder((4, 32, 32), CnnCfg(channels=(8, 16), kernel_sizes=(4, 3), strides=(2, 1), output_dim=16),
                           generator=make_generator(0, "cpu"))
    assert encoder._channels_last_backward
    images = torch.randint(0, 256, (6, 4, 32, 32), dtype=torch.uint8, generator=torch.Generator().manual_seed(1))
    features = encoder(images)  # grad enabled: the channels-last path
    with torch.no_grad():
        plain = encoder.net(images.float() / 255.0)  # NCHW
    torch.testing.assert_close(features, plain, rtol=1e-5, atol=1e-6)
    features.square().sum().backward()
    grads = [p.grad.clone() for p in encoder.parameters()]
    encoder.zero_grad()
    encoder.net(images.float() / 255.0).square().sum().backward()
    for fast, reference in zip(grads, [p.grad for p in encoder.parameters()], strict=True):
        torch.testing.assert_close(fast, reference, rtol=1e-4, atol=1e-6)
    rgb = ImageEncoder((3, 32, 32), CnnCfg(channels=(8,), kernel_sizes=(4,), strides=(2,), output_dim=16),
                       generator=make_generator(0, "cpu"))
    assert not rgb._channels_last_backward  # RGB is fastest in NCHW


def test_uint8_images_under_bf16_autocast_match_the_float32_scale_bitwise():
    """Under a bfloat16 autocast the encoder scales uint8 images straight into bfloat16 (no float32
    buffer): the features and the parameters' gradients are bitwise those of scaling in float32 and
    letting the first convolution cast, for every byte value."""
    encoder = ImageEncoder((4, 32, 32), CnnCfg(channels=(8, 16), kernel_sizes=(4, 3), strides=(2, 1), output_dim=16),
                           generator=make_generator(0, "cpu"))
    images = torch.arange(6 * 4 * 32 * 32).remainder(256).to(torch.uint8).reshape(6, 4, 32, 32)
    results = []
    for source in (images, images.float() / 255.0):
        encoder.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16):
            features = encoder(source)
            assert _input_dtype(images) == torch.bfloat16  # the bf16 scale is the one taken
        assert features.dtype == torch.bfloat16
        features.float().square().sum().backward()
        results.append((features.detach(), [p.grad.clone() for p in encoder.parameters() if p.grad is not None]))
    (fast, fast_grads), (reference, reference_grads) = results
    assert torch.equal(fast, reference)
    for mine, theirs in zip(fast_grads, reference_grads, strict=True):
        assert torch.equal(mine, theirs)
    # without autocast the scale stays float32
    assert _input_dtype(images) == torch.float32
    with torch.no_grad():
        assert encoder(images).dtype == torch.float32
