"""The exported computation as a small torch module: observation → (normalizer) → (memory) → MLP → action.

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

from typing import Literal, cast

import torch
from torch import nn

from canter.core.errors import CanterError
from canter.rl.modules import ActorCritic
from canter.rl.normalizer import EmpiricalNormalizer
from canter.rl.recurrent import Memory

Architecture = Literal["mlp", "gru", "lstm"]


def _normalizer_affine(policy: ActorCritic) -> tuple[torch.Tensor, torch.Tensor, float | None] | None:
    """(scale, shift, clip) with normalized = clamp(x·scale + shift, -clip, clip) over the concatenated
    actor groups, or None when the policy does not normalize."""
    scales, shifts, clips = [], [], set()
    for group in policy.actor_obs_groups:
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


class ExportableActor(nn.Module):
    """The deterministic actor of a trained policy, with explicit recurrent state.

    Attributes the exporters read: `architecture`, `obs_dim`, `num_actions`, `obs_scale`, `obs_shift`
    and `obs_clip` (None: no clamp, e.g. folded), `rnn` (nn.GRU/nn.LSTM or None), `layers` (Linear
    layers) and `activation` ("elu"/"relu"/"tanh").
    """

    num_layers: int
    hidden_dim: int
    rnn: nn.GRU | nn.LSTM | None

    def __init__(self, policy: ActorCritic) -> None:
        super().__init__()
        self.num_actions = policy.num_actions
        self.obs_dim = sum(policy.observation_shapes[g][0] for g in policy.actor_obs_groups)
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

    def _fold_into_first_layer(self, scale: torch.Tensor, shift: torch.Tensor) -> None:
        """W x̂ + b with x̂ = x·s + t equals (W·diag(s)) x + (W t + b); for a recurrent policy the
        first layer is the memory's input weights (both gate biases absorb the shift once: b_ih)."""
        with torch.no_grad():
            if self.rnn is None:
                first = cast(nn.Linear, self.layers[0])
                weight, bias = first.weight, first.bias
            else:
                weight, bias = cast(torch.Tensor, self.rnn.weight_ih_l0), cast(torch.Tensor, self.rnn.bias_ih_l0)
            bias.add_(weight @ shift)
            weight.mul_(scale)

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

    def forward(self, obs: torch.Tensor, *state: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """obs (B, obs_dim) [, h (L, B, H) [, c (L, B, H)]] -> (actions (B, A) [, h' [, c']])."""
        x = self.normalize(obs)
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


def _copy_rnn(rnn: nn.GRU | nn.LSTM) -> nn.GRU | nn.LSTM:
    out = type(rnn)(rnn.input_size, rnn.hidden_size, rnn.num_layers)
    out.load_state_dict({k: v.detach().float().cpu() for k, v in rnn.state_dict().items()})
    return out
