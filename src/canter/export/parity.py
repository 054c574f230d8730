"""Parity checks: an exported file must give the trained torch policy's actions.

A `Recording` is a sequence of policy observations (T, B, obs_dim) with episode starts (T, B); the
recurrent state of an env is zeroed before each step that starts an episode, as in training. Every
backend (the torch policy itself, the ONNX runtime, a TorchScript module) is stepped over the same
recording, and the checks report max |Δaction| between them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np
import torch

from canter.core.device import torch_threads
from canter.envs.atari import AtariEnv
from canter.envs.manager_env import ManagerBasedRLEnv
from canter.export.metadata import PolicyMetadata
from canter.export.runtime import PolicyRuntime
from canter.rl.modules import ActorCritic

# max |Δa| accepted between an fp32 export and the torch policy, relative to max(1, max |a|)
PARITY_TOLERANCE = 1e-5


@dataclass(kw_only=True)
class Recording:
    """obs: (T, B, obs_dim) float32; starts: (T, B) bool, True where step t begins an episode;
    images: group -> (T, B, C, H, W) in the env's dtype, for policies with image groups."""

    obs: np.ndarray
    starts: np.ndarray
    images: dict[str, np.ndarray] = field(default_factory=dict)

    def image_step(self, t: int) -> dict[str, np.ndarray]:
        """The images of step t: group -> (B, C, H, W)."""
        return {group: frames[t] for group, frames in self.images.items()}


def record_observations(env: ManagerBasedRLEnv | AtariEnv, policy: ActorCritic, steps: int,
                        group: str | None = "policy") -> Recording:
    """Runs the deterministic torch policy in `env` for `steps` steps and keeps its inputs (the
    vector group `group`, None for a policy that reads images only, and the actor's image groups)."""
    obs, _ = env.reset()
    start = torch.ones(env.num_envs, dtype=torch.bool, device=env.device)
    policy.hidden_states(env.num_envs)  # recurrent: states sized for this batch (zeroed by the reset below)
    policy.reset(start)
    frames, starts = [], []
    images: dict[str, list[np.ndarray]] = {g: [] for g in policy.actor_obs_groups if g in policy.image_groups}
    with torch.no_grad(), torch_threads(1):
        for _ in range(steps):
            frames.append(obs[group].float().cpu().numpy().copy() if group is not None
                          else np.zeros((env.num_envs, 0), dtype=np.float32))
            for image_group, image_frames in images.items():
                image_frames.append(obs[image_group].cpu().numpy().copy())
            starts.append(start.cpu().numpy().copy())
            obs, _, terminated, truncated, _ = env.step(policy.act_inference(obs))
            start = terminated | truncated
            policy.reset(start)
    return Recording(obs=np.stack(frames), starts=np.stack(starts),
                     images={g: np.stack(f) for g, f in images.items()})


def random_recording(obs_dim: int, steps: int, batch: int, seed: int, scale: float = 3.0,
                     images: Mapping[str, tuple[tuple[int, ...], str]] | None = None) -> Recording:
    """Gaussian observations N(0, scale²) from an explicit numpy generator, one episode per env;
    images: group -> (shape (C, H, W), dtype): uniform uint8 0..255, or uniform float32 in [0, scale)."""
    rng = np.random.default_rng(seed)
    obs = (scale * rng.standard_normal((steps, batch, obs_dim))).astype(np.float32)
    starts = np.zeros((steps, batch), dtype=bool)
    starts[0] = True
    frames = {}
    for group, (shape, dtype) in (images or {}).items():
        size = (steps, batch, *shape)
        frames[group] = (rng.integers(0, 256, size, dtype=np.uint8) if dtype == "uint8"
                         else (scale * rng.random(size)).astype(np.float32))
    return Recording(obs=obs, starts=starts, images=frames)


def torch_actions(policy: ActorCritic, recording: Recording, group: str | None = "policy") -> np.ndarray:
    """(T, B, A) actions of the torch policy itself (act_inference) over the recording."""
    policy.eval()
    device = next(policy.parameters()).device
    policy.hidden_states(recording.obs.shape[1])  # recurrent: states sized for this batch (zeroed at t = 0)
    out = []
    with torch.no_grad(), torch_threads(1):
        for t, (obs, starts) in enumerate(zip(recording.obs, recording.starts, strict=True)):
            policy.reset(torch.as_tensor(starts, device=device))
            inputs = {group: torch.as_tensor(obs, device=device)} if group is not None else {}
            inputs.update({g: torch.as_tensor(v, device=device) for g, v in recording.image_step(t).items()})
            out.append(policy.act_inference(inputs).float().cpu().numpy())
    return np.stack(out)


def onnx_actions(runtime: PolicyRuntime, recording: Recording) -> np.ndarray:
    """(T, B, A) actions of an ONNX policy through the runtime over the recording."""
    runtime.reset(recording.obs.shape[1])
    out = []
    for t, (obs, starts) in enumerate(zip(recording.obs, recording.starts, strict=True)):
        runtime.reset_where(starts)
        out.append(runtime.act(obs, recording.image_step(t)).copy())
    return np.stack(out)


def module_actions(module: Callable[..., tuple[torch.Tensor, ...]], state_count: int, num_layers: int,
                   hidden_dim: int, recording: Recording, *, vector_input: bool = True) -> np.ndarray:
    """(T, B, A) actions of a torch/TorchScript actor forward([obs,] *images, *states) over the
    recording (vector_input False: a TorchScript file of a policy that reads images only)."""
    batch = recording.obs.shape[1]
    states = [torch.zeros(num_layers, batch, hidden_dim) for _ in range(state_count)]
    out = []
    with torch.no_grad(), torch_threads(1):
        for t, (obs, starts) in enumerate(zip(recording.obs, recording.starts, strict=True)):
            keep = torch.from_numpy(~starts).float()[None, :, None]
            images = [torch.from_numpy(v) for v in recording.image_step(t).values()]
            vector = (torch.from_numpy(obs),) if vector_input else ()
            outputs = module(*vector, *images, *(s * keep for s in states))
            states = list(outputs[1:])
            out.append(outputs[0].float().numpy())
    return np.stack(out)


def choice_agreement(a: np.ndarray, b: np.ndarray, metadata: PolicyMetadata) -> float | None:
    """The fraction of rows (over every leading axis) where actions `a` and `b` (..., action_dim) choose
    the same discrete action in every field of choices (the largest logit); None for a policy without
    discrete choices."""
    agree, start = None, 0
    for term in metadata.action_terms:
        for spec in term.fields:
            if spec.get("choices") is not None:
                first, stop = start + spec["columns"][0], start + spec["columns"][1]
                same = a[..., first:stop].argmax(-1) == b[..., first:stop].argmax(-1)
                agree = same if agree is None else agree & same
        start += term.dim
    return None if agree is None else float(np.mean(agree))


def max_error(a: np.ndarray, b: np.ndarray) -> float:
    """max |a - b| (0 for empty arrays)."""
    return float(np.abs(a - b).max()) if a.size else 0.0


def within_tolerance(error: float, reference: np.ndarray) -> bool:
    """error ≤ PARITY_TOLERANCE · max(1, max |reference|)."""
    return error <= PARITY_TOLERANCE * max(1.0, float(np.abs(reference).max()))
