"""TorchScript export: the ExportableActor traced, with the metadata as the `canter.json` extra file.

Tracing records the one path the actor takes (the architecture is fixed at export), and the traced
graph keeps the batch axis dynamic (checked by the parity tests at several batch sizes). PyTorch marks
torch.jit as deprecated in favour of torch.export; the warning is silenced here because TorchScript
is what C++ robot stacks (libtorch) load today.
"""

from __future__ import annotations

import io
import warnings
from pathlib import Path
from typing import cast

import torch
from torch import nn

from canter.core.errors import CanterError
from canter.export.metadata import TORCHSCRIPT_EXTRA_FILE, PolicyMetadata
from canter.export.module import ExportableActor


class ImagesOnly(nn.Module):
    """forward(image_1, ... [, h [, c]]) of an actor that reads no vector observation (obs_dim 0): the
    TorchScript file takes the same inputs as the ONNX graph (metadata `inputs`, no `obs`)."""

    def __init__(self, actor: nn.Module) -> None:
        super().__init__()
        self.actor = actor

    def forward(self, *inputs: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return self.actor(inputs[0].new_zeros(inputs[0].shape[0], 0, dtype=torch.float32), *inputs)


def script_actor(actor: ExportableActor, module: nn.Module | None = None) -> torch.jit.ScriptModule:
    """The traced actor: forward(obs (B, D) [, image_k (B, C, H, W) ...] [, h [, c]]) -> (actions (B, A)
    [, h' [, c']]); an actor without a vector observation (obs_dim 0) has no obs argument.

    module: trace this transformed copy of `actor` instead (e.g. its int8-quantized copy).
    """
    images = tuple(torch.zeros(1, *shape, dtype=dtype) for shape, dtype in zip(actor.image_shapes, actor.image_dtypes, strict=True))
    traced = actor if module is None else module
    vector = (torch.zeros(1, actor.obs_dim),)
    if actor.obs_dim == 0:
        traced, vector = ImagesOnly(traced), ()
    example = (*vector, *images, *actor.initial_state(1))
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        return cast(torch.jit.ScriptModule, torch.jit.trace(traced, example))


def save_torchscript(actor: ExportableActor, metadata: PolicyMetadata, path: str | Path,
                     module: nn.Module | None = None) -> Path:
    """Writes the TorchScript archive (of `module` if given, see script_actor) with the metadata."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    archive = io.BytesIO()  # torch.jit.save aborts the process where the file cannot be written (a full
    with warnings.catch_warnings():  # disk): the archive is made in memory, and Python writes it out
        warnings.simplefilter("ignore")
        torch.jit.save(script_actor(actor, module), archive, _extra_files={TORCHSCRIPT_EXTRA_FILE: metadata.to_json()})
    path.write_bytes(archive.getvalue())
    return path


def load_torchscript(path: str | Path) -> tuple[torch.jit.ScriptModule, PolicyMetadata]:
    """(module, metadata) of a Canter TorchScript policy; CanterError for a missing or foreign file."""
    path = Path(path)
    if not path.is_file():
        raise CanterError(f"no policy file at {path}")
    extra = {TORCHSCRIPT_EXTRA_FILE: ""}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            module = torch.jit.load(str(path), map_location="cpu", _extra_files=extra)
    except Exception as err:
        raise CanterError(f"{path} is not a TorchScript file ({type(err).__name__})") from err
    if not extra[TORCHSCRIPT_EXTRA_FILE]:
        raise CanterError(f"{path} is not a Canter policy (no {TORCHSCRIPT_EXTRA_FILE} in the archive)")
    return module, PolicyMetadata.from_json(extra[TORCHSCRIPT_EXTRA_FILE], str(path))
