"""What an exported policy file says about itself, as string key → string value pairs.

The same pairs are written into an ONNX model's `metadata_props` and into a TorchScript archive's
`canter.json` extra file, so a robot-side program can run the policy with nothing but the file: the
observation layout (which terms, in what order, their sizes, clips and scales), the action layout
(actuators, joints, scale and offset of the position targets; or, for actions that are no actuator
commands, what each column asks a controller on the robot for: an end-effector displacement, a gripper
command, a body acceleration), the PD gains and force limits of the actuators of the trained MuJoCo
model, the control frequency and the recurrent state.

Format versions: 1 describes absolute joint actions only; 2 adds relative joint targets (`relative`,
`ctrl_range`) and action terms of other kinds (`kind`, `fields`, `params`); 3 adds policies that read
images only (no `obs` input) and choose among discrete actions (a field with `choices`), with the game
they play and its preprocessing (`game`: an Atari policy). A file is written with the lowest version that
describes it, so a policy of joint actions still loads in a Canter that reads 1.

This module imports neither torch nor onnx: the torch-free runtime uses it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from canter.core.errors import CanterError

FORMAT = "canter-policy"
FORMAT_VERSION = 3
JOINT = "joint"  # the kind of an action term whose actions are actuator commands
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

    kind "joint": ctrl = offset + scale · clip(action), offset "zero" or "default_joint_pos"; with
    `relative` the position targets move by scale · clip(action) each control step instead, clamped
    to the actuators' ctrl_range, from the offset at every episode start.
    Any other kind (e.g. "ee_delta", "quadruped_controller"): the actions are no actuator commands but
    what a controller on the robot is asked for; `actuators`/`joints` are the actuators that
    controller drives, `fields` say what each column asks for and `params` hold the controller's
    settings as trained. A field is {"name", "columns": [start, stop) within the term, "unit",
    "description", and one of "scale" (one factor per column: value = scale · clip(action)), "threshold"
    (value = action > threshold, a binary command) or "choices" (one name per column: the columns are
    logits and value = the index of the largest, a discrete choice such as a game's joystick action)};
    `PolicyRuntime.commands` computes them.
    """

    name: str
    dim: int
    actuators: tuple[str, ...]
    joints: tuple[str, ...]
    kind: str = JOINT
    scale: float | None = None
    offset: str | None = None
    clip: tuple[float, float] | None = None
    relative: bool = False
    fields: list[dict[str, Any]] = field(default_factory=list)
    params: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kind == JOINT:
            if len(self.actuators) != self.dim or self.scale is None or self.offset is None:
                raise CanterError(f"policy metadata: joint action term {self.name!r} needs one actuator per "
                                  f"column, a scale and an offset")
            return
        covered = sorted(tuple(f["columns"]) for f in self.fields)
        if [c for span in covered for c in range(*span)] != list(range(self.dim)):
            raise CanterError(f"policy metadata: the fields of action term {self.name!r} do not cover its "
                              f"{self.dim} columns once each")
        for spec in self.fields:
            first, stop = spec["columns"]
            given = [key for key in ("scale", "threshold", "choices") if spec.get(key) is not None]
            per_column = spec.get("scale") if spec.get("scale") is not None else spec.get("choices")
            if not isinstance(spec.get("name"), str) or len(given) != 1 or (
                    per_column is not None and len(per_column) != stop - first):
                raise CanterError(f"policy metadata: field {spec.get('name')!r} of action term {self.name!r} needs a "
                                  f"name and one of: a scale per column ({stop - first}), a threshold, a choice "
                                  "per column")

    @property
    def is_commands(self) -> bool:
        """True when the term's actions are actuator commands (kind "joint")."""
        return self.kind == JOINT

    @property
    def is_discrete(self) -> bool:
        """True when a field of the term chooses among discrete actions (its columns are logits)."""
        return any(spec.get("choices") is not None for spec in self.fields)


def format_version_for(terms: list[ActionTermInfo], *, vector_input: bool = True, game: bool = False) -> int:
    """The lowest format version that describes a policy with these action terms (3 for a policy
    without a vector input, one that plays a game, or one with discrete choices)."""
    if game or not vector_input or any(t.is_discrete for t in terms):
        return 3
    return 1 if all(t.kind == JOINT and not t.relative for t in terms) else 2


@dataclass(kw_only=True)
class PolicyMetadata:
    """Everything an exported policy file carries besides its weights.

    Per-actuator lists (joint_names, default_joint_pos, action_scale, action_offset, kp, kd,
    effort_limit, actuator_types, ctrl_range) follow the action terms' actuators in term order: for
    joint actions, the action vector's order. action_scale and action_offset are None for the actuators
    of a term of another kind (no affine map from its actions); ctrl_range is None where unlimited
    (empty in files written before it was kept). action_clip: the env clamps every action to
    ±action_clip before any term sees it (None: it does not). Units: rad (hinge) or m (slide)
    for joint positions; N·m/rad and N·m·s/rad (or N/m, N·s/m) for kp, kd; N·m or N for effort
    limits (None: unlimited); Hz for control_frequency_hz; s for physics_dt.
    recurrent: None for an MLP, else {"type": "gru"|"lstm", "num_layers", "hidden_dim"}.
    inputs / outputs: the graph's tensor names: observation (absent where the policy reads images
        only: observation_dim 0), images, (states) in; actions (and states) out.
    image_inputs: one entry per image input, in input order: {"name", "group", "shape": [C, H, W],
        "dtype": "uint8" | "float32"} (uint8 images are scaled by 1/255 inside the graph).
    quantization: "none" or "int8-dynamic"; int8_max_action_error: max |a_int8 - a_fp32| over the
    recorded observations it was checked on (None for fp32 files).
    game: for a policy that plays a game rather than drives a robot (an Atari policy; None otherwise):
        the emulator, the game's ROM id, its action set and the preprocessing of the frames the policy
        reads, as trained: {"engine": "ale-py", "engine_version", "rom", "action_set": [names],
        "frameskip", "max_pool_last_two_frames", "grayscale", "resize": [H, W], "resize_interpolation",
        "stack", "stack_order", "stack_padding" (what fills the stack before a game's first frames),
        "repeat_action_probability", "noop_max", "fire_reset",
        "max_episode_frames", "full_action_space"}. There are no actuators; physics_dt is one emulator
        frame and decimation the frame skip.
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
    action_scale: list[float | None]
    action_offset: list[float | None]
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
    ctrl_range: list[list[float] | None] = field(default_factory=list)
    action_clip: float | None = None
    game: dict[str, Any] | None = None
    canter_version: str = ""
    format: str = FORMAT
    format_version: int = FORMAT_VERSION

    def __post_init__(self) -> None:
        width = sum(term.width for term in self.observation_terms)
        if width != self.observation_dim:
            raise CanterError(f"policy metadata: observation terms cover {width} columns, not {self.observation_dim}")
        if sum(term.dim for term in self.action_terms) != self.action_dim:
            raise CanterError(f"policy metadata: action terms do not add up to action_dim {self.action_dim}")
        count = self.num_actuators
        for name in ("joint_names", "default_joint_pos", "action_scale", "action_offset", "kp", "kd",
                     "effort_limit", "actuator_types", *(("ctrl_range",) if self.ctrl_range else ())):
            if len(getattr(self, name)) != count:
                raise CanterError(f"policy metadata: {name} has {len(getattr(self, name))} entries, "
                                  f"not one per actuator ({count})")

    @property
    def num_actuators(self) -> int:
        """Actuators the action terms drive (= action_dim for joint actions)."""
        return sum(len(term.actuators) for term in self.action_terms)

    @property
    def actions_are_commands(self) -> bool:
        """True when every action term is a joint action, so `PolicyRuntime.ctrl` maps actions to
        actuator commands."""
        return all(term.is_commands for term in self.action_terms)

    @property
    def vector_input(self) -> bool:
        """True when the graph has the `obs` input (a policy reading images only has none)."""
        return "obs" in self.inputs

    @property
    def state_inputs(self) -> list[str]:
        """Names of the recurrent state inputs (empty for an MLP)."""
        return self.inputs[int(self.vector_input) + len(self.image_inputs) :]

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
        except (TypeError, KeyError, ValueError) as err:
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
             "ctrl_range", "action_clip", "game", "canter_version", "format", "format_version"}


def _pair(value: Any) -> tuple[float, float] | None:
    return None if value is None else (float(value[0]), float(value[1]))


def _obs_term(raw: dict[str, Any]) -> ObsTermInfo:
    return ObsTermInfo(name=str(raw["name"]), dim=int(raw["dim"]), history_length=int(raw.get("history_length", 0)),
                       clip=_pair(raw.get("clip")), scale=raw.get("scale"), function=str(raw.get("function", "")))


def _action_term(raw: dict[str, Any]) -> ActionTermInfo:
    scale, offset = raw.get("scale"), raw.get("offset")
    return ActionTermInfo(name=str(raw["name"]), dim=int(raw["dim"]), actuators=tuple(raw["actuators"]),
                          joints=tuple(raw["joints"]), kind=str(raw.get("kind", JOINT)),
                          scale=None if scale is None else float(scale), offset=None if offset is None else str(offset),
                          clip=_pair(raw.get("clip")), relative=bool(raw.get("relative", False)),
                          fields=[dict(f) for f in raw.get("fields", [])], params=dict(raw.get("params", {})))
