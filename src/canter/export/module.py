"""The exported computation as a small torch module: observation → (normalizer) → (memory) → MLP → action.

Image groups (policy.image_obs_groups) enter as inputs of their own, (B, C, H, W) in the dtype the
env emits (uint8 images are scaled by 1/255 inside, as in training), each through a copy of its CNN;
the first layer's input columns are reordered to [vector group, image features in image_groups
order], so the exported graph concatenates its inputs in that fixed order. A policy may read images
only (an Atari policy): obs_dim is then 0 and `forward` takes an empty (B, 0) observation.

`ExportableActor` copies the deterministic actor out of a trained ActorCritic (the action mean; the
critic, the action noise and the training-time machinery stay behind). Its parameters are what the
ONNX builder writes and what TorchScript scripts; its forward is the reference the parity checks
compare against. Recurrent state is explicit: forward(obs, h[, c]) → (actions, h'[, c']), each state
(num_layers, batch, hidden_dim), so the caller (a robot loop, onnxruntime) owns it.

Normalizer folding: an EmpiricalNormalizer computes clamp((x - μ) / σ, -clip, clip). Without a clip it
is affine and is folded into the first layer (W' = W / σ, b' = b - W' μ). With a clip (the default,
10) it is kept as x · (1/σ) + (-μ/σ) followed by a clamp, which is exact up to float rounding.
"""

from __future__ import annotations

import copy
from typing import Literal, cast

import torch
from torch import nn

from canter.core.errors import CanterError
from canter.rl.encoders import ImageEncoder
from canter.rl.modules import ActorCritic
from canter.rl.normalizer import EmpiricalNormalizer
from canter.rl.recurrent import Memory

Architecture = Literal["mlp", "gru", "lstm"]


def _normalizer_affine(policy: ActorCritic) -> tuple[torch.Tensor, torch.Tensor, float | None] | None:
    """(scale, shift, clip) with normalized = clamp(x·scale + shift, -clip, clip) over the concatenated
    actor groups, or None when the policy does not normalize (or reads no vector group)."""
    scales, shifts, clips = [], [], set()
    if not vector_groups(policy):
        return None
    for group in vector_groups(policy):
        normalizer = policy.normalizers[group]
        if not isinstance(normalizer, EmpiricalNormalizer):
            return None
        mean, std = normalizer.export_affine()
        scales.append(1.0 / std)
        shifts.append(-mean / std)
        clips.add(normalizer.clip)
    if len(clips) != 1:
        raise CanterError("export: actor observation groups with different normalizer clips are not supported")
    return torch.cat(scales).float(), torch.cat(shifts).float(), clips.pop()


def vector_groups(policy: ActorCritic) -> list[str]:
    """The actor's vector (non-image) observation groups, in order."""
    return [g for g in policy.actor_obs_groups if g not in policy.image_groups]


def _input_permutation(policy: ActorCritic) -> torch.Tensor:
    """Column order of the actor's first layer that puts the vector groups first, then the image
    features in actor order: the exported input is cat([obs, features of image 1, image 2, ...])."""
    starts, widths, column = {}, {}, 0
    for group in policy.actor_obs_groups:
        width = policy.cfg.cnn.output_dim if group in policy.image_groups else policy.observation_shapes[group][0]
        starts[group], widths[group] = column, width
        column += width
    order = vector_groups(policy) + [g for g in policy.actor_obs_groups if g in policy.image_groups]
    return torch.cat([torch.arange(starts[g], starts[g] + widths[g]) for g in order])


class ExportableActor(nn.Module):
    """The deterministic actor of a trained policy, with explicit recurrent state.

    Attributes the exporters read: `architecture`, `obs_dim`, `num_actions`, `obs_scale`, `obs_shift`
    and `obs_clip` (None: no clamp, e.g. folded), `rnn` (nn.GRU/nn.LSTM or None), `layers` (Linear
    layers) and `activation` ("elu"/"relu"/"tanh").
    """

    num_layers: int
    hidden_dim: int
    rnn: nn.GRU | nn.LSTM | None

    def __init__(self, policy: ActorCritic, image_dtypes: dict[str, torch.dtype] | None = None) -> None:
        super().__init__()
        self.num_actions = policy.num_actions
        self.obs_dim = sum(policy.observation_shapes[g][0] for g in vector_groups(policy))
        self.image_groups = [g for g in policy.actor_obs_groups if g in policy.image_groups]
        self.image_shapes = [tuple(policy.observation_shapes[g]) for g in self.image_groups]
        self.image_dtypes = [(image_dtypes or {}).get(g, torch.float32) for g in self.image_groups]
        self.encoders = nn.ModuleList([_copy_encoder(policy.encoders[policy._encoder_key("actor", g)])
                                       for g in self.image_groups])
        self.activation = policy.cfg.activation
        self.architecture: Architecture = "mlp" if not policy.is_recurrent else policy.cfg.rnn_type  # type: ignore[assignment]
        linear = [m for m in policy.actor if isinstance(m, nn.Linear)]
        self.layers = nn.ModuleList([_copy_linear(m) for m in linear])
        self.rnn = None
        if policy.is_recurrent:
            memory = cast(Memory, policy.actor_memory)
            self.rnn = _copy_rnn(cast(nn.GRU | nn.LSTM, memory.rnn))
            self.num_layers = memory.num_layers
            self.hidden_dim = memory.hidden_dim
        else:
            self.num_layers = self.hidden_dim = 0
        if self.image_groups:
            with torch.no_grad():
                weight = self._first_layer()[0]
                weight.copy_(weight[:, _input_permutation(policy)])
        affine = _normalizer_affine(policy)
        self.normalizer = "none" if affine is None else ("folded" if affine[2] is None else "affine+clip")
        scale = torch.ones(self.obs_dim) if affine is None else affine[0]
        shift = torch.zeros(self.obs_dim) if affine is None else affine[1]
        self.obs_clip: float | None = None if affine is None else affine[2]
        if affine is not None and self.obs_clip is None:
            self._fold_into_first_layer(scale, shift)
            scale, shift = torch.ones(self.obs_dim), torch.zeros(self.obs_dim)
        self.register_buffer("obs_scale", scale.detach().clone())
        self.register_buffer("obs_shift", shift.detach().clone())
        self.obs_scale: torch.Tensor
        self.obs_shift: torch.Tensor
        self.eval()

    def _first_layer(self) -> tuple[torch.Tensor, torch.Tensor]:
        """(weight, bias) of the layer that reads the observation: the first Linear, or for a
        recurrent policy the memory's input weights (b_ih)."""
        if self.rnn is None:
            first = cast(nn.Linear, self.layers[0])
            return first.weight, first.bias
        return cast(torch.Tensor, self.rnn.weight_ih_l0), cast(torch.Tensor, self.rnn.bias_ih_l0)

    def _fold_into_first_layer(self, scale: torch.Tensor, shift: torch.Tensor) -> None:
        """W x̂ + b with x̂ = x·s + t equals (W·diag(s)) x + (W t + b) over the vector columns (the
        first obs_dim); for a recurrent policy both gate biases absorb the shift once (b_ih)."""
        with torch.no_grad():
            weight, bias = self._first_layer()
            vector = weight[:, : self.obs_dim]
            bias.add_(vector @ shift)
            vector.mul_(scale)

    @property
    def state_names(self) -> list[str]:
        """Names of the recurrent states: [] (MLP), ["h"] (GRU), ["h", "c"] (LSTM)."""
        return {"mlp": [], "gru": ["h"], "lstm": ["h", "c"]}[self.architecture]

    def initial_state(self, batch_size: int) -> tuple[torch.Tensor, ...]:
        """Zero states, each (num_layers, batch_size, hidden_dim)."""
        shape = (self.num_layers, batch_size, self.hidden_dim)
        return tuple(torch.zeros(shape) for _ in self.state_names)

    def normalize(self, obs: torch.Tensor) -> torch.Tensor:
        x = obs * self.obs_scale + self.obs_shift
        return x if self.obs_clip is None else x.clamp(-self.obs_clip, self.obs_clip)

    def mlp(self, x: torch.Tensor) -> torch.Tensor:
        """The actor MLP: (B, in) -> (B, num_actions)."""
        for index, layer in enumerate(self.layers):
            x = layer(x)
            if index < len(self.layers) - 1:
                x = _activate(x, self.activation)
        return x

    def features(self, obs: torch.Tensor, images: tuple[torch.Tensor, ...]) -> torch.Tensor:
        """The first layer's input: cat([normalized obs, CNN features of each image in order])."""
        x = self.normalize(obs)
        if not images:
            return x
        return torch.cat([x, *(encoder(image) for encoder, image in zip(self.encoders, images, strict=True))], dim=-1)

    def forward(self, obs: torch.Tensor, *inputs: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """obs (B, obs_dim) [, image_k (B, C, H, W) ...] [, h (L, B, H) [, c (L, B, H)]]
        -> (actions (B, A) [, h' [, c']])."""
        count = len(self.image_groups)
        x = self.features(obs, inputs[:count])
        state = inputs[count:]
        if self.rnn is None:
            return (self.mlp(x),)
        if self.architecture == "lstm":
            out, (h, c) = self.rnn(x.unsqueeze(0), (state[0], state[1]))
            return self.mlp(out.squeeze(0)), h, c
        out, h = self.rnn(x.unsqueeze(0), state[0])
        return self.mlp(out.squeeze(0)), h


def _activate(x: torch.Tensor, name: str) -> torch.Tensor:
    if name == "elu":
        return torch.nn.functional.elu(x)
    if name == "relu":
        return torch.relu(x)
    return torch.tanh(x)


def _copy_linear(layer: nn.Linear) -> nn.Linear:
    out = nn.Linear(layer.in_features, layer.out_features)
    out.load_state_dict({k: v.detach().float().cpu() for k, v in layer.state_dict().items()})
    return out


def _copy_encoder(encoder: nn.Module) -> ImageEncoder:
    out = cast(ImageEncoder, copy.deepcopy(encoder)).cpu().float()
    out.eval()
    return out


def _copy_rnn(rnn: nn.GRU | nn.LSTM) -> nn.GRU | nn.LSTM:
    out = type(rnn)(rnn.input_size, rnn.hidden_size, rnn.num_layers)
    out.load_state_dict({k: v.detach().float().cpu() for k, v in rnn.state_dict().items()})
    return out
