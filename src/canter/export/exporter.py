"""Export a trained policy: write the file, check it against the torch policy, quantize if asked.

`export_policy(env, policy, task, ...)` is what `canter export RUN_DIR` runs after rebuilding the run's
env and policy. It records observations by running the deterministic torch policy in the env, writes
the fp32 file, checks it on random and recorded observations (PARITY_TOLERANCE), and for int8 writes
the quantized file with the max action error against fp32 in its metadata. A JSON report lands next
to the file (`<file>.json`). Both are moved into place only once every check has passed.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import torch

from canter.core.errors import CanterError
from canter.core.files import WriteError, is_write_failure, scratch_folder, write_failure
from canter.envs.atari import AtariEnv
from canter.envs.manager_env import ManagerBasedRLEnv
from canter.export import parity
from canter.export.describe import describe_game_policy, describe_policy
from canter.export.metadata import PolicyMetadata
from canter.export.module import ExportableActor, vector_groups
from canter.export.onnx_export import save_onnx
from canter.export.quantize import QUANTIZATION, annotate_onnx, quantize_actor, quantize_onnx
from canter.export.runtime import PolicyRuntime
from canter.export.torchscript import load_torchscript, save_torchscript
from canter.rl.modules import ActorCritic

Format = Literal["onnx", "torchscript"]
SUFFIX = {"onnx": ".onnx", "torchscript": ".pt"}


@dataclass(kw_only=True)
class ExportReport:
    """What an export wrote and measured. errors: {backend: {"random"|"recorded": max |Δa|}}."""

    path: Path
    metadata: PolicyMetadata
    errors: dict[str, dict[str, float]] = field(default_factory=dict)
    int8_max_action_error: float | None = None
    # a policy of discrete choices (a game's): the fraction of recorded steps where the int8 file's
    # greedy action is the fp32 file's (None otherwise, or without int8)
    int8_choice_agreement: float | None = None
    max_abs_action: float = 0.0  # max |a| of the fp32 export on the recorded observations, for scale
    recorded_steps: int = 0
    recorded_envs: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"path": str(self.path), "task": self.metadata.task, "architecture": self.metadata.architecture,
                "quantization": self.metadata.quantization, "max_action_error": self.errors,
                "int8_max_action_error": self.int8_max_action_error,
                "int8_choice_agreement": self.int8_choice_agreement, "max_abs_action": self.max_abs_action,
                "recorded_steps": self.recorded_steps,
                "recorded_envs": self.recorded_envs, "parity_tolerance": parity.PARITY_TOLERANCE}


def exportable(policy: ActorCritic, image_dtypes: dict[str, torch.dtype] | None = None, *,
               images_only: bool = False) -> tuple[ExportableActor, str | None]:
    """(actor, vector observation group) of a policy whose actor reads exactly one vector group (and
    any number of image groups, whose dtypes as the env emits them are `image_dtypes`); with
    images_only (an Atari policy), (actor, None) of one that reads image groups only."""
    groups = vector_groups(policy)
    if images_only and not groups and policy.image_groups:
        return ExportableActor(policy, image_dtypes), None
    if len(groups) != 1 or images_only:
        raise CanterError(f"export: the actor reads {len(groups)} vector observation groups {tuple(groups)}; "
                          f"export supports " + ("none (image groups only) for a game" if images_only else
                                                 "one (plus image groups)"))
    return ExportableActor(policy, image_dtypes), groups[0]


def described_actor(env: ManagerBasedRLEnv | AtariEnv, policy: ActorCritic,
                    task: str) -> tuple[ExportableActor, str | None, PolicyMetadata]:
    """(actor, vector group or None, metadata) of `policy` trained on `task` in `env`: a robot's
    (one vector group plus images) or a game's (the frames only)."""
    dtypes = getattr(env, "observation_dtypes", None) or {}
    game = isinstance(env, AtariEnv)
    actor, group = exportable(policy, {g: dtypes.get(g, torch.float32) for g in policy.image_groups}, images_only=game)
    if isinstance(env, AtariEnv):
        return actor, group, describe_game_policy(env, actor, task)
    assert group is not None
    return actor, group, describe_policy(env, actor, task, group)


def _check(name: str, error: float, reference: np.ndarray) -> None:
    if not parity.within_tolerance(error, reference):
        raise CanterError(f"export parity check failed: {name} differs from the torch policy by {error:.2e} "
                          f"(tolerance {parity.PARITY_TOLERANCE:g} x max(1, |a|))")


def _fp32_errors(fmt: Format, path: Path, actor: ExportableActor, policy: ActorCritic, group: str | None,
                 recordings: dict[str, parity.Recording]) -> tuple[dict[str, float], float]:
    """(max |Δa| between the written fp32 file and the torch policy per recording, max |a| on the
    recorded observations); raises CanterError if an error is too large."""
    errors, max_abs = {}, 0.0
    for name, recording in recordings.items():
        reference = parity.torch_actions(policy, recording, group)
        if fmt == "onnx":
            actions = parity.onnx_actions(PolicyRuntime(path), recording)
        else:
            module, _ = load_torchscript(path)
            actions = parity.module_actions(module, len(actor.state_names), actor.num_layers, actor.hidden_dim, recording,
                                            vector_input=actor.obs_dim > 0)
        errors[name] = parity.max_error(actions, reference)
        _check(f"{fmt} on {name} observations", errors[name], reference)
        if name == "recorded":
            max_abs = float(np.abs(reference).max())
    return errors, max_abs


def export_policy(env: ManagerBasedRLEnv | AtariEnv, policy: ActorCritic, task: str, *, fmt: Format, out: str | Path,
                  quantize: Literal["int8"] | None = None, record_steps: int = 100, seed: int = 0) -> ExportReport:
    """Writes `out` and its JSON report; see the module docstring. `env` must be the policy's env (a
    MuJoCo robot's, or an Atari game's: its policy reads the frames only and its actions are logits)."""
    if fmt not in SUFFIX:
        raise CanterError(f"--format: {fmt!r} is not one of 'onnx', 'torchscript'")
    policy.eval()
    actor, group, metadata = described_actor(env, policy, task)
    if metadata.observation_dim != actor.obs_dim:
        raise CanterError(f"export: group {group!r} has {metadata.observation_dim} columns, the actor reads {actor.obs_dim}")
    recordings = {
        "random": parity.random_recording(actor.obs_dim, 20, 8, seed, images={
            g: (shape, str(dtype).removeprefix("torch."))
            for g, shape, dtype in zip(actor.image_groups, actor.image_shapes, actor.image_dtypes, strict=True)}),
        "recorded": parity.record_observations(env, policy, record_steps, group),
    }
    out = Path(out)
    report = ExportReport(path=out, metadata=metadata, recorded_steps=record_steps, recorded_envs=env.num_envs)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        # Written and checked in a scratch folder beside `out`, then moved into place: an export that fails its
        # checks or is interrupted leaves the previous export at `out` (if any) as it was.
        with scratch_folder(out) as tmp:
            staged = tmp / out.name
            fp32_path = staged if quantize is None else tmp / f"fp32{SUFFIX[fmt]}"
            if fmt == "onnx":
                save_onnx(actor, metadata, fp32_path)
            else:
                save_torchscript(actor, metadata, fp32_path)
            report.errors["fp32"], report.max_abs_action = _fp32_errors(fmt, fp32_path, actor, policy, group, recordings)
            if quantize == "int8":
                report.int8_max_action_error, report.int8_choice_agreement = _write_int8(
                    fmt, fp32_path, staged, actor, metadata, recordings["recorded"])
                report.errors["int8"] = {"recorded": report.int8_max_action_error}
            staged_report = staged.with_name(out.name + ".json")
            staged_report.write_text(json.dumps(report.to_dict(), indent=2))
            os.replace(staged, out)
            os.replace(staged_report, out.with_name(out.name + ".json"))
    except (OSError, RuntimeError) as err:  # a full disk, a folder that cannot be written: one line naming the file
        if not is_write_failure(err):
            raise
        raise WriteError(write_failure(out, err)) from err
    return report


def _write_int8(fmt: Format, fp32_path: Path, out: Path, actor: ExportableActor, metadata: PolicyMetadata,
                recording: parity.Recording) -> tuple[float, float | None]:
    """Writes the int8 file at `out`; returns (max |a_int8 - a_fp32|, the share of greedy choices they
    agree on: see parity.choice_agreement) on the recorded observations."""
    if fmt == "onnx":
        quantize_onnx(fp32_path, out, metadata)
        int8 = parity.onnx_actions(PolicyRuntime(out), recording)
        fp32 = parity.onnx_actions(PolicyRuntime(fp32_path), recording)
        metadata.int8_max_action_error = parity.max_error(int8, fp32)
        annotate_onnx(out, metadata)
    else:
        quantized = quantize_actor(actor)
        states = (len(actor.state_names), actor.num_layers, actor.hidden_dim)
        int8 = parity.module_actions(quantized, *states, recording)  # both take the (B, 0) obs of an images-only actor
        fp32 = parity.module_actions(actor, *states, recording)
        metadata.quantization, metadata.int8_max_action_error = QUANTIZATION, parity.max_error(int8, fp32)
        save_torchscript(actor, metadata, out, module=quantized)
    return metadata.int8_max_action_error, parity.choice_agreement(int8, fp32, metadata)
