"""Export of policies whose actions are not absolute joint targets: the hand's relative joint targets
(the runtime's ctrl follows the env's moving, clamped targets), the arm's end-effector deltas and
the quadruped controller's targets (metadata fields, `commands`, a refused `ctrl`), the format
version each is written with, and the real-time loop with a wrist-camera policy."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from canter.core.errors import CanterError
from canter.core.rng import make_generator
from canter.envs.manager_env import ManagerBasedRLEnv
from canter.export.describe import describe_policy
from canter.export.metadata import FORMAT_VERSION, PolicyMetadata
from canter.export.module import ExportableActor
from canter.export.onnx_export import save_onnx
from canter.export.realtime import RealtimeCfg, run_realtime
from canter.export.runtime import PolicyRuntime, load_metadata
from canter.rl.factory import make_policy
from canter.tasks import REGISTRY

ARM_ACTUATORS = ("shoulder_pan", "shoulder_lift", "elbow", "wrist_pitch", "wrist_roll", "wrist_rotate",
                 "finger_left", "finger_right")


def _env(task: str, num_envs: int = 2, seed: int = 0) -> ManagerBasedRLEnv:
    cfg = REGISTRY.get(task).env_cfg()
    cfg.num_envs, cfg.seed = num_envs, seed
    cfg.sim.num_threads = 1
    return ManagerBasedRLEnv(cfg)


def _policy_cfg(task: str):
    agent_cfg = REGISTRY.get(task).agent_cfg
    assert agent_cfg is not None
    return agent_cfg().policy


def _export(env: ManagerBasedRLEnv, task: str, path) -> tuple[PolicyRuntime, torch.nn.Module]:
    """A freshly initialized policy of the task's agent config, exported to `path`."""
    policy = make_policy(env.observation_shapes, env.num_actions, _policy_cfg(task), init_generator=make_generator(0, "cpu"))
    policy.eval()
    dtypes = {g: env.observation_dtypes.get(g, torch.float32) for g in policy.image_groups}
    actor = ExportableActor(policy, dtypes)
    group = next(g for g in policy.actor_obs_groups if g not in policy.image_groups)
    return PolicyRuntime(save_onnx(actor, describe_policy(env, actor, task, group), path)), policy


@pytest.fixture(scope="module")
def hand():
    return _env("hand-cube")


def test_hand_relative_targets_are_described_and_the_runtime_ctrl_follows_the_env(hand, tmp_path):
    runtime, _ = _export(hand, "hand-cube", tmp_path / "hand.onnx")
    md = runtime.metadata
    (term,) = md.action_terms
    assert term.kind == "joint" and term.relative and term.scale == pytest.approx(0.1) and term.clip == (-1.0, 1.0)
    assert md.format_version == 2 and len(md.ctrl_range) == md.action_dim == 16
    ids = hand.action_manager.terms[0].ctrl_ids
    np.testing.assert_allclose(np.array(md.ctrl_range, dtype=float), hand.sim.model.actuator_ctrlrange[ids.numpy()])
    hand.reset()
    runtime.reset(hand.num_envs)
    generator = torch.Generator().manual_seed(3)
    moved, at_limit, compared = 0.0, 0, 0
    high = np.array(md.ctrl_range)[:, 1]
    for step in range(40):  # pushed one way for 30 steps: some targets reach their ctrl range and stay there
        actions = torch.full((hand.num_envs, 16), 1.5) if step < 30 else 2 * torch.rand(hand.num_envs, 16, generator=generator) - 1
        _, _, terminated, truncated, _ = hand.step(actions)
        ctrl = runtime.ctrl(actions.numpy())
        live = ~(terminated | truncated).numpy()  # an env that ended was reset, its targets with it
        np.testing.assert_allclose(ctrl[live], hand.sim.ctrl[:, ids].numpy()[live], atol=1e-6)
        moved = max(moved, float(np.abs(ctrl[live] - np.asarray(md.action_offset)).max(initial=0.0)))
        at_limit += int(np.isclose(ctrl[live], high, atol=1e-6).sum())
        compared += int(live.sum())
        runtime.reset_where(~live)
    # absolute targets (format 1's reading) would stay within 0.1 of the offset and never reach the limits
    assert compared > 40 and moved > 1.0 and at_limit > 0
    ctrl = runtime.ctrl(np.zeros((2, 16), dtype=np.float32))
    runtime.reset_where(np.array([True, False]))
    nxt = runtime.ctrl(np.zeros((2, 16), dtype=np.float32))
    np.testing.assert_allclose(nxt[0], np.array(md.action_offset, dtype=float), atol=1e-6)
    np.testing.assert_allclose(nxt[1], ctrl[1], atol=1e-6)
    assert runtime.commands(np.ones(16))["joint_pos"]["ctrl_change"] == pytest.approx([0.1] * 16)


def test_hand_deploy_loop_checks_the_relative_targets(hand, tmp_path):
    runtime, _ = _export(hand, "hand-cube", tmp_path / "hand.onnx")
    result = run_realtime(runtime, "hand-cube", RealtimeCfg(duration_s=0.3, seed=1))
    assert result["ticks"] > 3 and result["ctrl_max_abs_diff"] < 1e-5
    assert result["ctrl_check"] == "runtime.ctrl against the env's ctrl"
    # hand-cube-dr adds action noise, bias and a step of latency: the check maps what the servos received
    result = run_realtime(runtime, "hand-cube-dr", RealtimeCfg(duration_s=1.0, seed=1, paced=False))
    assert result["ticks"] > 20 and result["ctrl_max_abs_diff"] < 1e-5


def test_arm_end_effector_deltas_are_fields_and_ctrl_is_refused(tmp_path):
    env = _env("arm-grasp-state")
    runtime, _ = _export(env, "arm-grasp-state", tmp_path / "arm.onnx")
    md = load_metadata(tmp_path / "arm.onnx")
    (term,) = md.action_terms
    assert md.format_version == 2 and FORMAT_VERSION == 3 and not md.actions_are_commands
    assert term.kind == "ee_delta" and term.dim == 5 and term.actuators == ARM_ACTUATORS
    assert [f["name"] for f in term.fields] == ["tcp_displacement", "yaw_change", "gripper_close"]
    assert term.params["site"] == "tcp" and term.params["workspace_low"] == [0.2, -0.4, 0.422]
    assert md.actuator_types == ["position"] * 8 and md.kp == pytest.approx([1200.0] * 3 + [200.0] * 3 + [500.0] * 2)
    assert md.action_scale == [None] * 8 and md.joint_names == list(ARM_ACTUATORS)
    assert md.ctrl_range[-1] == pytest.approx([-0.01, 0.04])
    actions = np.array([[0.5, -2.0, 1.0, 0.4, 0.3], [0.0, 0.1, -0.2, -3.0, -0.1]], dtype=np.float32)
    commands = runtime.commands(actions)["ee_delta"]
    np.testing.assert_allclose(commands["tcp_displacement"], 0.015 * np.clip(actions[:, :3], -1, 1), rtol=1e-6)
    np.testing.assert_allclose(commands["yaw_change"], 0.15 * np.clip(actions[:, 3:4], -1, 1), rtol=1e-6)
    assert commands["gripper_close"].tolist() == [[True], [False]]
    # the gripper command is what the env's action term writes into the finger servos
    env.reset()
    env.step(torch.from_numpy(actions))
    fingers = env.sim.ctrl[:, -2:].numpy()
    np.testing.assert_allclose(fingers, [[-0.01, -0.01], [0.04, 0.04]])
    with pytest.raises(CanterError, match=r"action term 'ee_delta' \(ee_delta\) asks a controller on the robot for "
                                          r"tcp_displacement, yaw_change, gripper_close, not for actuator commands"):
        runtime.ctrl(actions)


def test_quadruped_controller_targets_are_described():
    cfg = REGISTRY.get("dog-stones").env_cfg()
    cfg.num_envs, cfg.sim.num_threads = 2, 1
    env = ManagerBasedRLEnv(cfg)
    policy = make_policy(env.observation_shapes, env.num_actions, _policy_cfg("dog-stones"),
                         init_generator=make_generator(0, "cpu"))
    md = describe_policy(env, ExportableActor(policy), "dog-stones")
    (term,) = md.action_terms
    assert term.kind == "quadruped_controller" and term.dim == 15 and len(term.actuators) == 12
    assert [f["name"] for f in term.fields] == ["com_acceleration", "angular_acceleration", "phase_speed_change",
                                                "foothold_offsets"]
    assert md.actuator_types == ["motor"] * 12 and md.action_clip is None and term.clip is None
    assert term.params["controller_rate_hz"] == pytest.approx(1.0 / (2 * env.sim.timestep))
    assert PolicyMetadata.from_props(md.to_props(), "x") == md


def test_joint_policies_keep_format_1_and_malformed_fields_are_refused(env, policies):
    md = describe_policy(env, ExportableActor(policies["mlp"]), "dog-flat")
    assert md.format_version == 1  # a Canter that reads format 1 still loads it
    props = md.to_props()
    older = {k: v for k, v in props.items() if k not in ("ctrl_range", "action_clip")}  # a file written before them
    assert PolicyMetadata.from_props(older, "old.onnx").ctrl_range == []
    arm = dict(props)
    terms = md.to_props()["action_terms"].replace('"kind": "joint"', '"kind": "ee_delta"')
    arm["action_terms"] = terms.replace('"fields": []', '"fields": [{"name": "x", "columns": [0, 5], "scale": [1]}]')
    with pytest.raises(CanterError, match=r"f\.onnx: policy metadata: the fields of action term 'joint_pos' do not "
                                          r"cover its 12 columns once each"):
        PolicyMetadata.from_props(arm, "f.onnx")
    arm["action_terms"] = terms.replace('"fields": []', '"fields": [{"name": "x", "columns": [0, 12], "scale": [1]}]')
    with pytest.raises(CanterError, match=r"field 'x' of action term 'joint_pos' needs a name and one of: a scale per "
                                          r"column \(12\), a threshold, a choice per column"):
        PolicyMetadata.from_props(arm, "f.onnx")
    arm["action_terms"] = terms.replace('"fields": []', '"fields": [{"name": "x", "columns": [0, 12, 1], "scale": [1]}]')
    with pytest.raises(CanterError, match=r"f\.onnx: malformed Canter policy metadata"):
        PolicyMetadata.from_props(arm, "f.onnx")


def test_wrist_camera_policy_runs_in_the_real_time_loop(tmp_path):
    env = _env("arm-grasp", num_envs=1)
    runtime, _ = _export(env, "arm-grasp", tmp_path / "grasp.onnx")
    md = runtime.metadata
    assert md.image_inputs == [{"name": "image_wrist", "group": "wrist", "shape": [3, 64, 64], "dtype": "uint8"}]
    result = run_realtime(runtime, "arm-grasp", RealtimeCfg(duration_s=0.5, seed=0, photos="unseen"))
    assert result["ticks"] >= 3 and result["ctrl_max_abs_diff"] is None and result["photos"] == "unseen"
    assert result["ctrl_check"].startswith("none: ee_delta (ee_delta) asks a controller")
    assert result["inference_us"]["p50"] > 0
