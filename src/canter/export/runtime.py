"""The robot-side runtime: run an exported Canter ONNX policy with numpy and onnxruntime only.

This module (and everything it imports) does not import torch, so it runs on onboard computers that
have no PyTorch. It loads a policy file, checks that it is a Canter policy (its metadata), keeps the
recurrent state and the last action between calls, and maps raw sensor terms to the policy input the
way the training env did (per term: clip, then scale, then history), and actions to actuator commands:

    runtime = PolicyRuntime("policy.onnx")
    runtime.reset()                                   # at the start of an episode
    actions = runtime.act_raw({"base_lin_vel": v, "joint_pos": q - q_default, ...})
    ctrl = runtime.ctrl(actions)                      # e.g. joint position targets, rad

A policy whose actions are no actuator commands (an end-effector displacement and a gripper command,
a quadruped controller's targets) has `commands(actions)` instead: per action term, each of its
fields in its unit ({"ee_delta": {"tcp_displacement": m, "yaw_change": rad, "gripper_close": bool}}),
for the robot's own controller to carry out; `ctrl` then names the term and refuses.

A policy that plays an Atari game reads the emulator's preprocessed frames only (metadata `game`):

    logits = runtime.act(None, {"policy": frames})     # frames: uint8 (4, 84, 84), oldest first
    index = runtime.commands(logits)["game"]["action"]  # into metadata.game["action_set"]

Terms computed by `last_action` may be left out of the dict: the runtime fills them in from its own
last output. Observation noise is a training-time corruption and is not applied.
"""

from __future__ import annotations

import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import cast

import numpy as np

from canter.core.errors import CanterError
from canter.export.metadata import PolicyMetadata

ArrayLike = np.ndarray | list[float] | tuple[float, ...]


def make_session(path: str | Path, threads: int = 1):
    """An onnxruntime CPU session for `path` with `threads` intra-op threads, sequential execution."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3
    try:
        return ort.InferenceSession(str(path), sess_options=options, providers=["CPUExecutionProvider"])
    except Exception as err:
        if zipfile.is_zipfile(path):  # a TorchScript archive (or a checkpoint) is a zip file; an ONNX model never is
            raise CanterError(f"{path} is a TorchScript or torch file, not ONNX: this runtime reads ONNX "
                              "(`canter export RUN_DIR`, whose default format is onnx)") from err
        detail = " ".join(str(err).split())[:160]
        raise CanterError(f"{path} is not a readable ONNX model ({type(err).__name__}: {detail})") from err


def load_metadata(path: str | Path) -> PolicyMetadata:
    """The metadata of a Canter ONNX policy, without keeping a session."""
    return PolicyRuntime(path).metadata


class PolicyRuntime:
    """One exported policy, run one observation (or one batch) at a time.

    path: a `.onnx` file written by `canter export`. threads: onnxruntime intra-op threads (1 keeps
    the latency steady on a robot computer that runs other loops).
    """

    def __init__(self, path: str | Path, *, threads: int = 1) -> None:
        self.path = Path(path)
        if not self.path.is_file():
            raise CanterError(f"no policy file at {self.path}")
        self._session = make_session(self.path, threads)
        props = dict(self._session.get_modelmeta().custom_metadata_map)
        self.metadata = PolicyMetadata.from_props(props, str(self.path))
        md = self.metadata
        graph_inputs = [i.name for i in self._session.get_inputs()]
        if graph_inputs != md.inputs or [o.name for o in self._session.get_outputs()] != md.outputs:
            raise CanterError(f"{self.path}: graph inputs/outputs {graph_inputs} do not match its metadata {md.inputs}")
        self.obs_dim = md.observation_dim
        self.action_dim = md.action_dim
        self._clips = [(t.dim, t.clip) for t in md.action_terms]
        if md.actions_are_commands:  # one actuator per action column
            self._scale = np.array(md.action_scale, dtype=np.float32)
            self._offset = np.array(md.action_offset, dtype=np.float32)
            ranges = md.ctrl_range or [None] * md.num_actuators
            self._low = np.array([-np.inf if r is None else r[0] for r in ranges])
            self._high = np.array([np.inf if r is None else r[1] for r in ranges])
            self._relative = np.concatenate([np.full(t.dim, t.relative) for t in md.action_terms])
            ends = np.cumsum([t.dim for t in md.action_terms])
            self._term_offsets = {t.name: self._offset[end - t.dim : end] for t, end in zip(md.action_terms, ends, strict=True)}
        self._targets: np.ndarray | None = None  # (B, action_dim) float64 targets of relative joint terms
        self._history: dict[str, np.ndarray] = {}
        self._state: list[np.ndarray] = []
        self.last_action = np.zeros(self.action_dim, dtype=np.float32)
        self.reset()

    # --- state -------------------------------------------------------------------------------------

    def reset(self, batch_size: int = 1) -> None:
        """Forgets the recurrent state, the last action and the observation history (new episode)."""
        recurrent = self.metadata.recurrent
        self._state = []
        if recurrent is not None:
            shape = (int(recurrent["num_layers"]), batch_size, int(recurrent["hidden_dim"]))
            self._state = [np.zeros(shape, dtype=np.float32) for _ in self.metadata.state_inputs]
        self.last_action = np.zeros(self.action_dim, dtype=np.float32)
        self._history = {}
        self._targets = None

    def reset_where(self, done: ArrayLike) -> None:
        """Forgets the recurrent state of the batch rows where done (B,) is True (other rows keep it)."""
        keep = ~np.asarray(done, dtype=bool).reshape(-1)
        if self._state and keep.shape[0] == self._state[0].shape[1]:
            self._state = [s * keep.astype(np.float32)[None, :, None] for s in self._state]
        if keep.shape[0] == 1 and not keep[0]:
            self.last_action = np.zeros(self.action_dim, dtype=np.float32)
            self._history = {}
        if self._targets is not None and keep.shape[0] == self._targets.shape[0]:
            self._targets = np.where(keep[:, None], self._targets, self._offset)

    @property
    def state(self) -> list[np.ndarray]:
        """The recurrent state(s), each (num_layers, batch, hidden_dim); empty for an MLP."""
        return self._state

    # --- inference ---------------------------------------------------------------------------------

    def act(self, obs: ArrayLike | None, images: Mapping[str, np.ndarray] | None = None) -> np.ndarray:
        """Actions for policy input `obs`: (obs_dim,) -> (action_dim,), or (B, obs_dim) -> (B, action_dim).

        `obs` is the processed policy observation (as the training env's policy group). A policy with
        image inputs also needs `images`: group -> (C, H, W) or (B, C, H, W) in the dtype its metadata
        names (image_inputs), channels first, as in training. A policy that reads images only
        (observation_dim 0, e.g. an Atari policy) takes obs None (or an empty array) and its batch from
        the images. The recurrent state advances; a batch of a new size starts from a zero state.
        """
        if obs is None and not self.metadata.vector_input:
            single, size = self._image_batch(images or {})
        else:
            x = np.asarray(obs, dtype=np.float32)
            single = x.ndim == 1
            batch = x[None] if single else x
            if batch.ndim != 2 or batch.shape[1] != self.obs_dim:
                raise CanterError(f"observation has shape {tuple(x.shape)}; the policy expects ({self.obs_dim},) "
                                  f"or (batch, {self.obs_dim}) ({self._layout()})")
            size = batch.shape[0]
        if self._state and self._state[0].shape[1] != size:
            self.reset(size)
        feed = {"obs": np.ascontiguousarray(batch)} if self.metadata.vector_input else {}
        feed.update(self._image_feed(images or {}, single, size))
        feed.update(zip(self.metadata.state_inputs, self._state, strict=True))
        outputs = cast(list[np.ndarray], self._session.run(None, feed))
        self._state = list(outputs[1:])
        actions = outputs[0][0] if single else outputs[0]
        if single:
            self.last_action = actions
        return actions

    def _image_batch(self, images: Mapping[str, np.ndarray]) -> tuple[bool, int]:
        """(single, batch size) of the images of a policy that reads images only."""
        spec = self.metadata.image_inputs[0]
        if spec["group"] not in images:
            raise CanterError(f"image {spec['group']!r} is missing: the policy reads images "
                              f"{[s['group'] for s in self.metadata.image_inputs]}")
        shape = np.shape(images[spec["group"]])
        single = len(shape) == len(spec["shape"])
        return single, 1 if single else int(shape[0])

    def _image_feed(self, images: Mapping[str, np.ndarray], single: bool, batch: int) -> dict[str, np.ndarray]:
        """The image inputs, checked against the metadata's shapes and dtypes."""
        feed = {}
        for spec in self.metadata.image_inputs:
            if spec["group"] not in images:
                raise CanterError(f"image {spec['group']!r} is missing: the policy reads images "
                                  f"{[s['group'] for s in self.metadata.image_inputs]}")
            image = np.asarray(images[spec["group"]])
            image = image[None] if single else image
            expected = (batch, *spec["shape"])
            if image.shape != expected or image.dtype != np.dtype(spec["dtype"]):
                raise CanterError(f"image {spec['group']!r} is {image.dtype}{tuple(image.shape)}; the policy expects "
                                  f"{spec['dtype']}{expected} (channels first)")
            feed[spec["name"]] = np.ascontiguousarray(image)
        return feed

    def observation(self, terms: Mapping[str, ArrayLike]) -> np.ndarray:
        """The policy input (obs_dim,) from raw term values {name: (dim,)}: clip, scale, history."""
        parts = []
        for term in self.metadata.observation_terms:
            if term.name in terms:
                value = np.asarray(terms[term.name], dtype=np.float32).reshape(-1)
            elif term.function.endswith(":last_action"):
                value = self.last_action
            else:
                raise CanterError(f"observation term {term.name!r} is missing ({self._layout()})")
            if value.shape[0] != term.dim:
                raise CanterError(f"observation term {term.name!r} has {value.shape[0]} values, the policy expects {term.dim}")
            if term.clip is not None:
                value = np.clip(value, term.clip[0], term.clip[1])
            if term.scale is not None:
                value = value * np.float32(term.scale)
            if term.history_length > 0:
                history = self._history.get(term.name)
                if history is None:  # a new episode: every slot holds the first value
                    history = np.repeat(value[None], term.history_length, axis=0)
                else:
                    history = np.concatenate((history[1:], value[None]), axis=0)
                self._history[term.name] = history
                value = history.reshape(-1)
            parts.append(value)
        return np.concatenate(parts).astype(np.float32, copy=False) if parts else np.zeros(0, dtype=np.float32)

    def act_raw(self, terms: Mapping[str, ArrayLike], images: Mapping[str, np.ndarray] | None = None) -> np.ndarray:
        """Actions (action_dim,) from raw term values (see `observation`) and, for a policy with image
        inputs, its images (see `act`)."""
        return self.act(self.observation(terms), images)

    def ctrl(self, actions: ArrayLike) -> np.ndarray:
        """Actuator commands from actions (action_dim,) or (B, action_dim), per action term:
        offset + scale · clip(action); a relative term's targets move by scale · clip(action) from
        their last values (the offsets after `reset`), clamped to the actuators' ctrl_range, so call it
        once per control step.

        For position actuators these are joint position targets (rad or m) for PD gains kp, kd
        (metadata); for motors, forces or torques. A policy with an action term of another kind
        (`commands`) is refused with the term's name.
        """
        a = self._clipped(actions)
        if not self.metadata.actions_are_commands:
            term = next(t for t in self.metadata.action_terms if not t.is_commands)
            asked = "a choice of" if term.is_discrete else "a controller on the robot for"
            raise CanterError(f"{self.path}: action term {term.name!r} ({term.kind}) asks {asked} "
                              f"{', '.join(f['name'] for f in term.fields)}, not for actuator commands; use commands()")
        absolute = self._offset + self._scale * a
        if not self._relative.any():
            return absolute
        batch = np.atleast_2d(a).astype(np.float64)
        if self._targets is None or self._targets.shape[0] != batch.shape[0]:
            self._targets = np.broadcast_to(self._offset.astype(np.float64), batch.shape).copy()
        moved = np.clip(self._targets + self._scale.astype(np.float64) * batch, self._low, self._high)
        self._targets = np.where(self._relative, moved, np.atleast_2d(absolute))
        return self._targets.astype(np.float32).reshape(absolute.shape)

    def commands(self, actions: ArrayLike) -> dict[str, dict[str, np.ndarray]]:
        """What the actions ask for, per action term and field (metadata `ActionTermInfo.fields`):
        scale · clip(action) in the field's unit, action > threshold for a binary field, or the index
        of the largest logit for a field of choices (an int64 per row: the greedy action). A joint
        term gives {"ctrl": offset + scale · clip(action)}, or {"ctrl_change": scale · clip(action)} if
        it is relative. Shapes follow `actions`: (action_dim,) gives (k,) per field, (B, ...) (B, k)."""
        a = self._clipped(actions)
        out: dict[str, dict[str, np.ndarray]] = {}
        start = 0
        for term in self.metadata.action_terms:
            part = a[..., start : start + term.dim]
            start += term.dim
            if term.is_commands:
                assert term.scale is not None
                if term.relative:
                    out[term.name] = {"ctrl_change": np.float32(term.scale) * part}
                else:
                    out[term.name] = {"ctrl": self._term_offsets[term.name] + np.float32(term.scale) * part}
                continue
            values: dict[str, np.ndarray] = {}
            for spec in term.fields:
                first, stop = spec["columns"]
                column = part[..., first:stop]
                if spec.get("choices") is not None:
                    values[spec["name"]] = np.argmax(column, axis=-1)
                elif spec.get("threshold") is not None:
                    values[spec["name"]] = column > np.float32(spec["threshold"])
                else:
                    values[spec["name"]] = np.asarray(spec["scale"], dtype=np.float32) * column
            out[term.name] = values
        return out

    def _clipped(self, actions: ArrayLike) -> np.ndarray:
        """Actions as the terms see them: clamped to ±action_clip, then each term's slice to its clip."""
        a = np.asarray(actions, dtype=np.float32)
        if a.shape[-1] != self.action_dim:
            raise CanterError(f"actions have {a.shape[-1]} values, the policy has {self.action_dim}")
        if self.metadata.action_clip is not None:
            a = np.clip(a, -self.metadata.action_clip, self.metadata.action_clip)
        start, parts = 0, []
        for dim, clip in self._clips:
            part = a[..., start : start + dim]
            parts.append(part if clip is None else np.clip(part, clip[0], clip[1]))
            start += dim
        return np.concatenate(parts, axis=-1)

    def _layout(self) -> str:
        return "terms: " + ", ".join(f"{t.name}[{t.width}]" for t in self.metadata.observation_terms)
