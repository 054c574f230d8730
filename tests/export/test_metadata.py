"""Metadata: what describe_policy reads off the dog task, and that it survives the ONNX round trip."""

from __future__ import annotations

import pytest

from canter.core.errors import CanterError
from canter.export.describe import describe_policy
from canter.export.metadata import FORMAT_VERSION, PolicyMetadata
from canter.export.module import ExportableActor
from canter.export.onnx_export import save_onnx
from canter.export.runtime import load_metadata
from canter.tasks import REGISTRY

DOG_JOINTS = [f"{leg}_{part}_joint" for leg in ("FR", "FL", "RR", "RL") for part in ("hip", "thigh", "calf")]


def test_dog_metadata_names_joints_gains_pose_scales_and_rate(env, policies):
    md = describe_policy(env, ExportableActor(policies["lstm"]), "dog-flat")
    assert md.task == "dog-flat" and md.architecture == "lstm"
    assert md.recurrent == {"type": "lstm", "num_layers": 2, "hidden_dim": 16}
    assert md.inputs == ["obs", "h_in", "c_in"] and md.outputs == ["actions", "h_out", "c_out"]
    assert md.joint_names == DOG_JOINTS
    assert md.default_joint_pos == pytest.approx([0.0, 0.9, -1.8] * 4)  # the MJCF's home keyframe
    assert md.action_offset == pytest.approx(md.default_joint_pos)  # position targets around the home pose
    assert md.kp == pytest.approx([35.0] * 12) and md.kd == pytest.approx([0.5] * 12)
    assert md.effort_limit == pytest.approx([23.7, 23.7, 35.55] * 4)
    assert md.actuator_types == ["position"] * 12 and md.action_scale == [0.25] * 12
    assert md.control_frequency_hz == pytest.approx(50.0) and md.decimation == 4 and md.physics_dt == pytest.approx(0.005)
    terms = {t.name: t for t in md.observation_terms}
    assert list(terms) == ["base_lin_vel", "base_ang_vel", "projected_gravity", "velocity_commands", "joint_pos",
                           "joint_vel", "actions"]
    assert terms["base_ang_vel"].scale == 0.25 and terms["joint_vel"].scale == 0.05 and terms["joint_pos"].scale is None
    assert [terms[n].dim for n in terms] == [3, 3, 3, 3, 12, 12, 12] and md.observation_dim == 48
    assert terms["actions"].function == "canter.mdp.observations:last_action"


def test_metadata_round_trips_through_an_onnx_file(env, policies, tmp_path):
    actor = ExportableActor(policies["gru"])
    md = describe_policy(env, actor, "dog-flat")
    path = save_onnx(actor, md, tmp_path / "policy.onnx")
    assert load_metadata(path) == md
    assert PolicyMetadata.from_props(md.to_props(), "x") == md
    assert PolicyMetadata.from_json(md.to_json(), "x") == md


def test_cartpole_force_actuator_is_a_motor_without_gains():
    from canter.core.rng import make_generator
    from canter.envs.manager_env import ManagerBasedRLEnv
    from canter.rl.config import PolicyCfg
    from canter.rl.factory import make_policy

    cfg = REGISTRY.get("cartpole").env_cfg()
    cfg.num_envs = 2
    env = ManagerBasedRLEnv(cfg)
    policy = make_policy(env.observation_shapes, env.num_actions, PolicyCfg(), init_generator=make_generator(0, "cpu"))
    md = describe_policy(env, ExportableActor(policy), "cartpole")
    assert md.actuator_types == ["motor"] and md.kp == [0.0] and md.kd == [0.0]
    assert md.action_offset == [0.0] and md.action_scale == [100.0] and md.joint_names == ["slider"]
    assert md.control_frequency_hz == pytest.approx(60.0) and md.normalizer == "none"


def test_bad_metadata_is_refused_with_the_reason(env, policies):
    props = describe_policy(env, ExportableActor(policies["mlp"]), "dog-flat").to_props()
    with pytest.raises(CanterError, match="is not a Canter policy"):
        PolicyMetadata.from_props({k: v for k, v in props.items() if k != "format"}, "f.onnx")
    with pytest.raises(CanterError, match="lacks 'kp'"):
        PolicyMetadata.from_props({k: v for k, v in props.items() if k != "kp"}, "f.onnx")
    with pytest.raises(CanterError, match="newer than this Canter"):
        PolicyMetadata.from_props({**props, "format_version": str(FORMAT_VERSION + 1)}, "f.onnx")
    with pytest.raises(CanterError, match="not valid JSON"):
        PolicyMetadata.from_props({**props, "joint_names": "[broken"}, "f.onnx")
    with pytest.raises(CanterError, match=r"f\.onnx: policy metadata: observation terms cover 48 columns, not 47"):
        PolicyMetadata.from_props({**props, "observation_dim": "47"}, "f.onnx")
