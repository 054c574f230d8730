"""What an exported policy file says about itself, as string key → string value pairs.

The same pairs are written into an ONNX model's `metadata_props` and into a TorchScript archive's
`canter.json` extra file, so a robot-side program can run the policy with nothing but the file: the
observation layout (which terms, in what order, their sizes, clips and scales), the action layout
(actuators, joints, scale and offset of the position targets), the PD gains and force limits of the
actuators of the trained MuJoCo model, the control frequency and the recurrent state.

This module imports neither torch nor onnx: the torch-free runtime uses it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from canter.core.errors import CanterError

FORMAT = "canter-policy"
FORMAT_VERSION = 1
TORCHSCRIPT_EXTRA_FILE = "canter.json"


@dataclass(kw_only=True)
class ObsTermInfo:
    """One observation term of the policy group, in the order of the policy input.

    dim: values per frame; history_length: frames kept (0: just the current one; the term then
    occupies dim · max(1, history_length) columns, oldest frame first). clip: (low, high) applied to
    the raw value before scale; scale: factor applied after the clip (None: 1). function: the term
    function's `module:name`, e.g. `canter.mdp.observations:last_action`.
    """

    name: str
    dim: int
    history_length: int = 0
    clip: tuple[float, float] | None = None
    scale: float | None = None
    function: str = ""

    @property
    def width(self) -> int:
        """Columns of the policy input this term occupies."""
        return self.dim * max(1, self.history_length)


@dataclass(kw_only=True)
class ActionTermInfo:
    """One action term: which slice of the action vector drives which actuators, and how.

    ctrl = offset + scale · clip(action). offset: "zero" or "default_joint_pos".
    """

    name: str
    dim: int
    actuators: tuple[str, ...]
    joints: tuple[str, ...]
    scale: float
    offset: str
    clip: tuple[float, float] | None = None


@dataclass(kw_only=True)
class PolicyMetadata:
    """Everything an exported policy file carries besides its weights.

    Per-actuator lists (joint_names, default_joint_pos, action_scale, action_offset, kp, kd,
    effort_limit, actuator_types) follow the action vector's order. Units: rad (hinge) or m (slide)
    for joint positions; N·m/rad and N·m·s/rad (or N/m, N·s/m) for kp, kd; N·m or N for effort
    limits (None: unlimited); Hz for control_frequency_hz; s for physics_dt.
    recurrent: None for an MLP, else {"type": "gru"|"lstm", "num_layers", "hidden_dim"}.
    inputs / outputs: the graph's tensor names: observation, images, (states) in; actions (and states) out.
    image_inputs: one entry per image input, in input order: {"name", "group", "shape": [C, H, W],
        "dtype": "uint8" | "float32"} (uint8 images are scaled by 1/255 inside the graph).
    quantization: "none" or "int8-dynamic"; int8_max_action_error: max |a_int8 - a_fp32| over the
    recorded observations it was checked on (None for fp32 files).
    """

    task: str
    architecture: str
    observation_group: str
    observation_dim: int
    observation_terms: list[ObsTermInfo]
    action_dim: int
    action_terms: list[ActionTermInfo]
    joint_names: list[str]
    default_joint_pos: list[float]
    action_scale: list[float]
    action_offset: list[float]
    kp: list[float]
    kd: list[float]
    effort_limit: list[float | None]
    actuator_types: list[str]
    control_frequency_hz: float
    physics_dt: float
    decimation: int
    recurrent: dict[str, Any] | None = None
    image_inputs: list[dict[str, Any]] = field(default_factory=list)
    inputs: list[str] = field(default_factory=lambda: ["obs"])
    outputs: list[str] = field(default_factory=lambda: ["actions"])
    normalizer: str = "none"
    quantization: str = "none"
    int8_max_action_error: float | None = None
    canter_version: str = ""
    format: str = FORMAT
    format_version: int = FORMAT_VERSION

    def __post_init__(self) -> None:
        width = sum(term.width for term in self.observation_terms)
        if width != self.observation_dim:
            raise CanterError(f"policy metadata: observation terms cover {width} columns, not {self.observation_dim}")
        if sum(term.dim for term in self.action_terms) != self.action_dim:
            raise CanterError(f"policy metadata: action terms do not add up to action_dim {self.action_dim}")
        for name in ("joint_names", "default_joint_pos", "action_scale", "action_offset", "kp", "kd",
                     "effort_limit", "actuator_types"):
            if len(getattr(self, name)) != self.action_dim:
                raise CanterError(f"policy metadata: {name} has {len(getattr(self, name))} entries, "
                                  f"not action_dim {self.action_dim}")

    @property
    def state_inputs(self) -> list[str]:
        """Names of the recurrent state inputs (empty for an MLP)."""
        return self.inputs[1 + len(self.image_inputs) :]

    def to_props(self) -> dict[str, str]:
        """String pairs for ONNX metadata_props: strings as they are, everything else as JSON."""
        props: dict[str, str] = {}
        for key, value in asdict(self).items():
            props[key] = value if isinstance(value, str) else json.dumps(value)
        return props

    @classmethod
    def from_props(cls, props: Mapping[str, str], source: str) -> PolicyMetadata:
        """Parses and validates pairs written by `to_props`; CanterError naming `source` otherwise."""
        if props.get("format") != FORMAT:
            raise CanterError(f"{source} is not a Canter policy (no '{FORMAT}' metadata)")
        try:
            version = int(props.get("format_version", "0"))
        except ValueError as err:
            raise CanterError(f"{source}: bad format_version {props.get('format_version')!r}") from err
        if version > FORMAT_VERSION:
            raise CanterError(f"{source}: policy format version {version} is newer than this Canter's "
                              f"({FORMAT_VERSION}); update Canter")
        values: dict[str, Any] = {}
        for spec in fields(cls):
            if spec.name not in props:
                if spec.name in _OPTIONAL:
                    continue
                raise CanterError(f"{source}: Canter policy metadata lacks {spec.name!r}")
            raw = props[spec.name]
            try:
                values[spec.name] = raw if spec.type == "str" else json.loads(raw)
            except ValueError as err:
                raise CanterError(f"{source}: metadata {spec.name!r} is not valid JSON") from err
        try:
            values["observation_terms"] = [_obs_term(t) for t in values["observation_terms"]]
            values["action_terms"] = [_action_term(t) for t in values["action_terms"]]
            return cls(**values)
        except (TypeError, KeyError) as err:
            raise CanterError(f"{source}: malformed Canter policy metadata ({err})") from err
        except CanterError as err:
            raise CanterError(f"{source}: {err}") from err

    def to_json(self) -> str:
        """The pairs as one JSON object (the TorchScript extra file)."""
        return json.dumps(self.to_props(), indent=1)

    @classmethod
    def from_json(cls, text: str | bytes, source: str) -> PolicyMetadata:
        try:
            props = json.loads(text)
        except ValueError as err:
            raise CanterError(f"{source}: {TORCHSCRIPT_EXTRA_FILE} is not valid JSON") from err
        if not isinstance(props, dict):
            raise CanterError(f"{source} is not a Canter policy ({TORCHSCRIPT_EXTRA_FILE} is not an object)")
        return cls.from_props({str(k): str(v) for k, v in props.items()}, source)


_OPTIONAL = {"recurrent", "inputs", "outputs", "normalizer", "quantization", "int8_max_action_error",
             "canter_version", "format", "format_version"}


def _pair(value: Any) -> tuple[float, float] | None:
    return None if value is None else (float(value[0]), float(value[1]))


def _obs_term(raw: dict[str, Any]) -> ObsTermInfo:
    return ObsTermInfo(name=str(raw["name"]), dim=int(raw["dim"]), history_length=int(raw.get("history_length", 0)),
                       clip=_pair(raw.get("clip")), scale=raw.get("scale"), function=str(raw.get("function", "")))


def _action_term(raw: dict[str, Any]) -> ActionTermInfo:
    return ActionTermInfo(name=str(raw["name"]), dim=int(raw["dim"]), actuators=tuple(raw["actuators"]),
                          joints=tuple(raw["joints"]), scale=float(raw["scale"]), offset=str(raw["offset"]),
                          clip=_pair(raw.get("clip")))
