"""Layers of the policy networks: initialised linear/conv layers and the convolutional encoder of
image observation groups, (B, C, H, W) -> (B, output_dim).

An image group (an observation whose shape is (C, H, W)) is never normalized by running statistics:
uint8 images (RGB, 0..255) are scaled to [0, 1]; float images (depth in metres, segmentation masks)
enter as they come, so the observation term decides their scale (clip/scale in its config).
Parameters are drawn from an explicit CPU generator, as for the MLPs (canter.rl.modules).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch import nn

from canter.rl.config import CnnCfg

ACTIVATIONS: dict[str, type[nn.Module]] = {"elu": nn.ELU, "relu": nn.ReLU, "tanh": nn.Tanh}


def init_linear(in_dim: int, out_dim: int, gain: float, generator: torch.Generator) -> nn.Linear:
    """A CPU nn.Linear with orthogonal weights (scaled by gain) from `generator` and zero bias."""
    layer = nn.Linear(in_dim, out_dim, device="meta").to_empty(device="cpu")
    nn.init.orthogonal_(layer.weight, gain=gain, generator=generator)
    nn.init.zeros_(layer.bias)
    return layer


def conv_output_size(size: int, kernel: int, stride: int) -> int:
    """Output length of an unpadded convolution along one axis: ⌊(size − kernel) / stride⌋ + 1."""
    return (size - kernel) // stride + 1


def conv_output_shape(image_shape: Sequence[int], cfg: CnnCfg) -> tuple[int, int, int]:
    """(channels, height, width) after the conv stack of cfg applied to an image (C, H, W)."""
    _, height, width = (int(s) for s in image_shape)
    for kernel, stride in zip(cfg.kernel_sizes, cfg.strides, strict=True):
        height, width = conv_output_size(height, kernel, stride), conv_output_size(width, kernel, stride)
    return cfg.channels[-1], height, width


def _init_conv(in_channels: int, out_channels: int, kernel: int, stride: int, generator: torch.Generator) -> nn.Conv2d:
    conv = nn.Conv2d(in_channels, out_channels, kernel, stride, device="meta").to_empty(device="cpu")
    nn.init.orthogonal_(conv.weight, gain=math.sqrt(2.0), generator=generator)
    assert conv.bias is not None
    nn.init.zeros_(conv.bias)
    return conv


def channels_last_on_cpu(image_shape: Sequence[int]) -> bool:
    """Whether images of (C, H, W) `image_shape` learn faster channels-last on the CPU (4+ channels;
    see ImageEncoder). A store of such images kept channels-last (a DAgger dataset) gathers
    minibatches that are already in that layout: no reorder per minibatch."""
    return len(image_shape) == 3 and int(image_shape[0]) > 3


def _input_dtype(images: torch.Tensor) -> torch.dtype:
    """The float type uint8 images are scaled into: bfloat16 under a bfloat16 autocast, whose first
    convolution would cast a float32 input to it anyway; float32 otherwise. In bfloat16, x / 255 is
    computed in float32 and rounded once, so the values are bitwise those of the float32 scale then
    cast, without the float32 buffer: Atari's minibatch of 256 4x84x84 frames converts in 3.7 ms
    instead of 7.1 (tests/rl/test_encoders.py checks the bits)."""
    device = images.device.type
    if torch.is_autocast_enabled(device) and torch.get_autocast_dtype(device) == torch.bfloat16:
        return torch.bfloat16
    return torch.float32


class ImageEncoder(nn.Module):
    """Conv stack (no padding) → flatten → Linear → activation, for one image group.

    image_shape: (C, H, W) of the group. The input may be uint8 (scaled by 1/255) or floating point
    (used as is); any leading batch dimensions are flattened and restored: (..., C, H, W) -> (..., D).
    """

    def __init__(self, image_shape: Sequence[int], cfg: CnnCfg, *, generator: torch.Generator) -> None:
        super().__init__()
        self.image_shape = tuple(int(s) for s in image_shape)
        channels, height, width = conv_output_shape(self.image_shape, cfg)
        if height < 1 or width < 1:
            raise ValueError(f"image {self.image_shape} is too small for the conv stack (output {height}x{width})")
        layers: list[nn.Module] = []
        in_channels = self.image_shape[0]
        for out_channels, kernel, stride in zip(cfg.channels, cfg.kernel_sizes, cfg.strides, strict=True):
            layers += [_init_conv(in_channels, out_channels, kernel, stride, generator), ACTIVATIONS[cfg.activation]()]
            in_channels = out_channels
        layers += [nn.Flatten(), init_linear(channels * height * width, cfg.output_dim, math.sqrt(2.0), generator),
                   ACTIVATIONS[cfg.activation]()]
        self.net = nn.Sequential(*layers)
        self.output_dim = cfg.output_dim
        # On the CPU, oneDNN's weight gradient of a first convolution over 4+ channels is several times
        # slower in NCHW than in channels-last (4x64x64, 16 filters of 8x8: 113 ms against 37 ms per
        # batch of 780; Atari's 4x84x84 Nature CNN: 437 against 333 ms forward and backward), while
        # 3-channel RGB is fastest in NCHW and a forward pass alone is faster in NCHW for all of them:
        # so backward passes over 4+ channels take channels-last input.
        self._channels_last_backward = channels_last_on_cpu(self.image_shape)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        lead = images.shape[:-3]
        x = images.reshape(-1, *self.image_shape)
        if self._channels_last_backward and x.device.type == "cpu" and torch.is_grad_enabled():
            # reorder the uint8 bytes, not the floats: a quarter of the memory traffic (bitwise the same)
            x = x.contiguous(memory_format=torch.channels_last)
        # scale in place: no second float buffer (4x64x64 x 780 frames: 86 -> 37 ms with the reorder)
        x = x.to(_input_dtype(x)).div_(255.0) if x.dtype == torch.uint8 else x.float()
        return self.net(x).reshape(*lead, self.output_dim)
