"""Image observation groups: a term returning (num_envs, C, H, W) forms a group of its own that keeps
its dtype (uint8 RGB stays uint8), noise is rounded and clamped back to 0..255, a history stacks
frames along the channels (oldest first), and an image term among vector terms is refused."""

from __future__ import annotations

import pytest
import torch

from canter.core.errors import ConfigError
from canter.envs.manager_env import ManagerBasedRLEnv
from canter.managers.observation import NoiseCfg, ObsGroupCfg, ObsTermCfg
from canter.tasks.cartpole.env_cfg import cartpole_env_cfg


def cart_image(env: ManagerBasedRLEnv) -> torch.Tensor:
    """A 2x3x4 uint8 image per env: every pixel is 100 + 10 · (episode step count mod 10)."""
    value = 100 + 10 * (env.episode_length_buf % 10)
    return value.to(torch.uint8)[:, None, None, None].expand(env.num_envs, 2, 3, 4).contiguous()


def make_env(**term) -> ManagerBasedRLEnv:
    cfg = cartpole_env_cfg()
    cfg.num_envs = 3
    cfg.sim.num_threads = 1
    cfg.observations["camera"] = ObsGroupCfg(terms={"image": ObsTermCfg(func=cart_image, **term)})
    return ManagerBasedRLEnv(cfg)


def test_image_group_keeps_shape_and_uint8():
    env = make_env()
    assert env.observation_shapes["camera"] == (2, 3, 4) and env.observation_dtypes["camera"] == torch.uint8
    assert env.observation_dtypes["policy"] == torch.float32
    obs, _ = env.reset()
    image = obs["camera"]
    assert image.shape == (3, 2, 3, 4) and image.dtype == torch.uint8
    assert int(image[0, 0, 0, 0]) == 100 + 10 * int(env.episode_length_buf[0] % 10)


def test_history_stacks_frames_along_channels_oldest_first():
    env = make_env(history_length=3)
    assert env.observation_shapes["camera"] == (6, 3, 4)
    obs, _ = env.reset()
    first = obs["camera"][:, ::2, 0, 0]  # channel 0 of each of the 3 frames
    assert (first == first[:, :1]).all()  # after a reset every slot holds the first frame
    for _ in range(2):
        obs, *_ = env.step(torch.zeros(env.num_envs, env.num_actions))
    frames = obs["camera"][:, ::2, 0, 0].long()
    steps = env.episode_length_buf.long()
    expected = torch.stack([100 + 10 * ((steps - k) % 10) for k in (2, 1, 0)], dim=1)
    assert torch.equal(frames, expected)


def test_noise_on_uint8_images_is_rounded_and_clamped():
    env = make_env(noise=NoiseCfg(kind="uniform", low=-200.0, high=200.0))
    obs, _ = env.reset()
    image = obs["camera"]
    assert image.dtype == torch.uint8
    assert int(image.min()) == 0 and int(image.max()) == 255  # ±200 around 100..190 hits both bounds
    assert len(torch.unique(image)) > 20  # per-pixel noise, not one value per image


def test_a_scaled_image_is_float_and_an_image_among_vectors_is_refused():
    env = make_env(scale=1 / 255)
    obs, _ = env.reset()
    assert obs["camera"].dtype == torch.float32 and float(obs["camera"].max()) <= 1.0
    cfg = cartpole_env_cfg()
    cfg.num_envs = 2
    cfg.observations["policy"].terms["image"] = ObsTermCfg(func=cart_image)
    with pytest.raises(ConfigError, match="an image term must be alone in its group"):
        ManagerBasedRLEnv(cfg)
