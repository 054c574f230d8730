"""Reads the metadata of an exported policy off the env it was trained in and the policy itself:
a MuJoCo robot's (`describe_policy`) or an Atari game's (`describe_game_policy`)."""

from __future__ import annotations

import math

import mujoco

import canter
from canter.core.errors import CanterError
from canter.envs.atari import FRAMES_PER_SECOND, AtariEnv
from canter.envs.manager_env import ManagerBasedRLEnv
from canter.export.metadata import ActionTermInfo, ObsTermInfo, PolicyMetadata, format_version_for
from canter.export.module import ExportableActor
from canter.export.onnx_export import io_names
from canter.managers.action import ActionTerm
from canter.mdp.actions import JointAction


def _function_name(func: object) -> str:
    target = func if callable(func) and hasattr(func, "__qualname__") else type(func)
    return f"{getattr(target, '__module__', '?')}:{getattr(target, '__qualname__', '?')}"


def observation_terms(env: ManagerBasedRLEnv, group: str) -> list[ObsTermInfo]:
    """The terms of observation group `group` in input order."""
    if group not in env.observation_manager.groups:
        raise CanterError(f"export: the env has no observation group {group!r}")
    return [
        ObsTermInfo(
            name=term.name,
            dim=term.dim,
            history_length=term.cfg.history_length,
            clip=None if term.cfg.clip is None else (float(term.cfg.clip[0]), float(term.cfg.clip[1])),
            scale=None if term.cfg.scale is None else float(term.cfg.scale),
            function=_function_name(term.func),
        )
        for term in env.observation_manager.groups[group]
    ]


Facts = tuple[str, str, float, float, float | None]  # (joint name, type, kp, kd, effort limit) of one actuator


def _actuator_facts(model: mujoco.MjModel, actuator: int) -> Facts:
    """(joint name, type, kp, kd, effort limit) of one actuator of the nominal model.

    A position servo is an affine-bias actuator with biasprm = (0, -kp, -kd) and gainprm[0] = kp;
    a motor has no bias (kp = kd = 0).
    """
    if int(model.actuator_trntype[actuator]) != int(mujoco.mjtTrn.mjTRN_JOINT):
        raise CanterError(f"export: actuator {model.actuator(actuator).name!r} does not drive a joint")
    joint = model.joint(int(model.actuator_trnid[actuator, 0])).name
    gain, bias = model.actuator_gainprm[actuator], model.actuator_biasprm[actuator]
    affine = int(model.actuator_biastype[actuator]) == int(mujoco.mjtBias.mjBIAS_AFFINE)
    if affine and math.isclose(float(gain[0]), -float(bias[1])):
        kind, kp, kd = "position", float(gain[0]), -float(bias[2])
    elif int(model.actuator_biastype[actuator]) == int(mujoco.mjtBias.mjBIAS_NONE):
        kind, kp, kd = "motor", 0.0, 0.0
    else:
        kind, kp, kd = "general", float(-bias[1]), float(-bias[2])
    limit = None
    if model.actuator_forcelimited[actuator]:
        limit = float(max(abs(model.actuator_forcerange[actuator, 0]), abs(model.actuator_forcerange[actuator, 1])))
    return joint, kind, kp, kd, limit


def _joint_term(env: ManagerBasedRLEnv, term: JointAction) -> tuple[ActionTermInfo, list[int], list[Facts], list[float | None]]:
    """(info, ctrl ids, their facts, per-actuator offsets) of a joint action term."""
    clip = None if term.cfg.clip is None else (float(term.cfg.clip[0]), float(term.cfg.clip[1]))
    ids = [int(i) for i in term.ctrl_ids.tolist()]
    facts = [_actuator_facts(env.scene.model, i) for i in ids]
    info = ActionTermInfo(name=term.name, dim=term.action_dim, actuators=tuple(term.names), joints=tuple(f[0] for f in facts),
                          scale=float(term.cfg.scale), offset=term.cfg.offset, clip=clip, relative=bool(term.cfg.relative))
    return info, ids, facts, [float(v) for v in term.offset.tolist()]


def _other_term(env: ManagerBasedRLEnv, term: ActionTerm) -> tuple[ActionTermInfo, list[int], list[Facts], list[float | None]]:
    """(info, ctrl ids, their facts, None offsets) of an action term that describes itself (`export_description`)."""
    description = term.export_description()
    if description is None:
        raise CanterError(f"export: action term {term.name!r} ({type(term).__name__}) is neither a joint action nor "
                          "describes what its actions ask for (ActionTerm.export_description)")
    model = env.scene.model
    ids = [int(i) for i in description["actuator_ids"]]
    facts = [_actuator_facts(model, i) for i in ids]
    clip = description.get("clip")
    info = ActionTermInfo(
        name=term.name, dim=term.action_dim, kind=str(description["kind"]),
        actuators=tuple(model.actuator(i).name for i in ids), joints=tuple(f[0] for f in facts),
        clip=None if clip is None else (float(clip[0]), float(clip[1])),
        fields=[dict(f) for f in description["fields"]], params=dict(description.get("params", {})),
    )
    return info, ids, facts, [None] * len(ids)


def _recurrent(actor: ExportableActor) -> dict[str, object] | None:
    """The metadata's `recurrent`: None for a feed-forward actor."""
    if actor.rnn is None:
        return None
    return {"type": actor.architecture, "num_layers": actor.num_layers, "hidden_dim": actor.hidden_dim}


def describe_policy(env: ManagerBasedRLEnv, actor: ExportableActor, task: str, group: str = "policy") -> PolicyMetadata:
    """The metadata of `actor`, trained on `task` in `env` (reading observation group `group`)."""
    model = env.scene.model
    terms = observation_terms(env, group)
    action_terms: list[ActionTermInfo] = []
    per_actuator: dict[str, list] = {k: [] for k in ("joints", "default", "scale", "offset", "kp", "kd", "limit",
                                                      "type", "range")}
    for term in env.action_manager.terms:
        info, ids, facts, offsets = _joint_term(env, term) if isinstance(term, JointAction) else _other_term(env, term)
        action_terms.append(info)
        for i, (joint, kind, kp, kd, limit), offset in zip(ids, facts, offsets, strict=True):
            column = env.scene.names("joint").index(joint)
            per_actuator["joints"].append(joint)
            per_actuator["default"].append(float(env.scene.default_joint_pos[column]))
            per_actuator["scale"].append(info.scale)
            per_actuator["offset"].append(offset)
            per_actuator["kp"].append(kp)
            per_actuator["kd"].append(kd)
            per_actuator["limit"].append(limit)
            per_actuator["type"].append(kind)
            per_actuator["range"].append([float(v) for v in model.actuator_ctrlrange[i]]
                                         if model.actuator_ctrllimited[i] else None)
    inputs, outputs = io_names(actor.architecture, actor.image_groups)
    image_inputs = [
        {"name": name, "group": group, "shape": list(shape), "dtype": str(dtype).removeprefix("torch.")}
        for name, group, shape, dtype in zip(inputs[1:], actor.image_groups, actor.image_shapes, actor.image_dtypes,
                                             strict=False)
    ]
    return PolicyMetadata(
        task=task,
        architecture=actor.architecture,
        observation_group=group,
        observation_dim=sum(t.width for t in terms),
        observation_terms=terms,
        action_dim=env.action_manager.action_dim,
        action_terms=action_terms,
        joint_names=per_actuator["joints"],
        default_joint_pos=per_actuator["default"],
        action_scale=per_actuator["scale"],
        action_offset=per_actuator["offset"],
        kp=per_actuator["kp"],
        kd=per_actuator["kd"],
        effort_limit=per_actuator["limit"],
        actuator_types=per_actuator["type"],
        ctrl_range=per_actuator["range"],
        action_clip=None if env.cfg.clip_actions is None else float(env.cfg.clip_actions),
        control_frequency_hz=1.0 / env.step_dt,
        physics_dt=float(env.physics_dt),
        decimation=int(env.cfg.decimation),
        recurrent=_recurrent(actor),
        image_inputs=image_inputs,
        inputs=inputs,
        outputs=outputs,
        normalizer=actor.normalizer,
        canter_version=canter.__version__,
        format_version=format_version_for(action_terms),
    )


def describe_game_policy(env: AtariEnv, actor: ExportableActor, task: str) -> PolicyMetadata:
    """The metadata of `actor`, trained on the Atari task `task` in `env`: one discrete action term
    whose columns are the logits of the game's action set, the frames it reads (uint8, as the emulator
    preprocesses them) and the game's settings as trained (metadata `game`). The frames are Gymnasium's
    `AtariPreprocessing(frame_skip, screen_size, grayscale_obs=True)` + `FrameStackObservation(stack,
    padding_type="zero")` over `ALE/<Game>-v5` with frameskip=1, bit for bit (tests/export)."""
    import ale_py

    if actor.obs_dim or actor.image_groups != ["policy"]:
        raise CanterError("export: an Atari policy reads the frame stack only")
    cfg = env.cfg
    names = env.action_names
    term = ActionTermInfo(
        name="game", dim=env.num_actions, actuators=(), joints=(), kind="discrete",
        fields=[{"name": "action", "columns": [0, env.num_actions], "choices": names, "unit": "",
                 "description": "logits over the game's action set: the greedy action is the largest; "
                                "sample from softmax(logits) for the stochastic policy"}],
    )
    inputs, outputs = io_names(actor.architecture, actor.image_groups, vector_input=False)
    game = {
        "engine": "ale-py", "engine_version": ale_py.__version__, "rom": cfg.game, "action_set": names,
        "frameskip": cfg.frameskip, "max_pool_last_two_frames": True, "grayscale": True,
        "resize": [cfg.size, cfg.size], "resize_interpolation": "area", "stack": cfg.stack,
        "stack_order": "oldest first", "stack_padding": "zero frames",
        "repeat_action_probability": cfg.repeat_action_probability,
        "noop_max": cfg.noop_max, "fire_reset": cfg.use_fire_reset, "max_episode_frames": cfg.max_episode_frames,
        "full_action_space": cfg.full_action_space,
    }
    return PolicyMetadata(
        task=task, architecture=actor.architecture, observation_group="", observation_dim=0, observation_terms=[],
        action_dim=env.num_actions, action_terms=[term], joint_names=[], default_joint_pos=[], action_scale=[],
        action_offset=[], kp=[], kd=[], effort_limit=[], actuator_types=[],
        control_frequency_hz=FRAMES_PER_SECOND / cfg.frameskip, physics_dt=1.0 / FRAMES_PER_SECOND,
        decimation=cfg.frameskip,
        image_inputs=[{"name": inputs[0], "group": "policy", "shape": list(actor.image_shapes[0]),
                       "dtype": str(actor.image_dtypes[0]).removeprefix("torch.")}],
        recurrent=_recurrent(actor),
        inputs=inputs, outputs=outputs, normalizer=actor.normalizer, game=game, canter_version=canter.__version__,
        format_version=format_version_for([term], vector_input=False, game=True),
    )
