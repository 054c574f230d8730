"""The torch-free runtime: imports without torch, keeps recurrent state like the torch policy, maps raw
sensor terms to the policy input like the env, and refuses bad input with one-line errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import onnx
import pytest
import torch
from onnx import TensorProto, helper

from canter.core.errors import CanterError
from canter.export.describe import describe_policy
from canter.export.module import ExportableActor
from canter.export.onnx_export import save_onnx
from canter.export.realtime import sensor_reader
from canter.export.runtime import PolicyRuntime

from .helpers import dog_env, trained_looking_policy


@pytest.fixture(scope="module")
def exported(env, policies, tmp_path_factory):
    folder = tmp_path_factory.mktemp("runtime")
    paths = {}
    for arch, policy in policies.items():
        actor = ExportableActor(policy)
        paths[arch] = save_onnx(actor, describe_policy(env, actor, "dog-flat"), folder / f"{arch}.onnx")
    return paths


def test_runtime_imports_and_runs_without_torch(exported):
    terms = {"base_lin_vel": [0.1, 0.0, 0.0], "base_ang_vel": [0.0, 0.0, 0.2], "projected_gravity": [0.0, 0.0, -1.0],
             "velocity_commands": [0.5, 0.0, 0.0], "joint_pos": [0.01] * 12, "joint_vel": [0.3] * 12}
    code = (
        "import json, sys\n"
        "sys.modules['torch'] = None  # any import of torch now raises ImportError\n"
        "from canter.export.runtime import PolicyRuntime\n"
        f"runtime = PolicyRuntime({str(exported['gru'])!r})\n"
        f"terms = json.loads({json.dumps(json.dumps(terms))})\n"
        "actions = [runtime.act_raw(terms).tolist() for _ in range(3)]\n"
        "print(json.dumps({'actions': actions, 'torch': [m for m in sys.modules if m.startswith('torch')]}))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=dict(os.environ))
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["torch"] == ["torch"]  # only the blocking placeholder: nothing imported torch
    runtime = PolicyRuntime(exported["gru"])
    expected = [runtime.act_raw(terms).tolist() for _ in range(3)]
    assert np.allclose(out["actions"], expected, atol=1e-6)
    assert not np.allclose(expected[0], expected[2])  # the recurrent state moved the actions


@pytest.mark.parametrize("architecture", ["gru", "lstm"])
def test_runtime_state_follows_the_torch_policy_over_a_sequence_with_a_reset(exported, policies, architecture):
    policy = policies[architecture]
    runtime = PolicyRuntime(exported[architecture])
    generator = np.random.default_rng(3)
    policy.hidden_states(1)
    policy.reset(torch.ones(1, dtype=torch.bool))
    for step in range(25):
        obs = generator.standard_normal(runtime.obs_dim).astype(np.float32)
        if step == 14:  # an episode ends: both forget their memory
            runtime.reset()
            policy.reset(torch.ones(1, dtype=torch.bool))
        actions = runtime.act(obs)
        with torch.no_grad():
            reference = policy.act_inference({"policy": torch.from_numpy(obs)[None]})[0].numpy()
        assert np.abs(actions - reference).max() < 1e-5 * max(1.0, np.abs(reference).max())
        assert runtime.state[0].shape == (policy.cfg.rnn_num_layers, 1, 16)


def test_raw_terms_map_to_the_envs_policy_input_with_scale_and_history(tmp_path):
    env = dog_env(num_envs=1, seed=4, history_length=3)
    for group in env.cfg.observations.values():
        group.enable_corruption = False
    env.observation_manager.cfg = env.cfg.observations
    actor = ExportableActor(trained_looking_policy(env, "mlp"))
    runtime = PolicyRuntime(save_onnx(actor, describe_policy(env, actor, "dog-flat"), tmp_path / "h.onnx"))
    assert runtime.obs_dim == 48 + 24
    read = sensor_reader(env, runtime)
    env.reset()
    runtime.reset()
    for step in range(12):
        if step == 6:
            env.reset()
            runtime.reset()
        expected = env.get_observations()["policy"][0].numpy()
        terms, _ = read()
        assert "actions" not in terms  # the runtime supplies the last action itself
        observation = runtime.observation(terms)
        assert np.abs(observation - expected).max() < 1e-6
        actions = runtime.act(observation)
        env.step(torch.from_numpy(actions)[None])
        assert np.abs(runtime.ctrl(actions) - env.sim.ctrl[0].numpy()).max() < 1e-6


def _plain_onnx(path):
    graph = helper.make_graph([helper.make_node("Identity", ["obs"], ["actions"])], "g",
                              [helper.make_tensor_value_info("obs", TensorProto.FLOAT, [1, 48])],
                              [helper.make_tensor_value_info("actions", TensorProto.FLOAT, [1, 48])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


def test_bad_input_gives_one_line_errors(exported, tmp_path):
    with pytest.raises(CanterError, match="no policy file at"):
        PolicyRuntime(tmp_path / "missing.onnx")
    (tmp_path / "junk.onnx").write_bytes(b"\x00garbage")
    with pytest.raises(CanterError, match="is not a readable ONNX model"):
        PolicyRuntime(tmp_path / "junk.onnx")
    import torch  # a TorchScript archive or a checkpoint (zip files) handed to the ONNX runtime is named as such

    torch.save({"model": 1}, tmp_path / "checkpoint.pt")
    with pytest.raises(CanterError, match=r"checkpoint\.pt is a TorchScript or torch file, not ONNX"):
        PolicyRuntime(tmp_path / "checkpoint.pt")
    with pytest.raises(CanterError, match="is not a Canter policy"):
        PolicyRuntime(_plain_onnx(tmp_path / "plain.onnx"))
    runtime = PolicyRuntime(exported["mlp"])
    with pytest.raises(CanterError, match=r"observation has shape \(47,\); the policy expects \(48,\)"):
        runtime.act(np.zeros(47))
    with pytest.raises(CanterError, match="observation term 'base_lin_vel' is missing"):
        runtime.act_raw({"joint_pos": np.zeros(12)})
    terms = {t.name: np.zeros(t.dim) for t in runtime.metadata.observation_terms}
    terms["joint_vel"] = np.zeros(11)
    with pytest.raises(CanterError, match="'joint_vel' has 11 values, the policy expects 12"):
        runtime.act_raw(terms)
    for message in ("no policy file at", "observation has shape"):
        assert "\n" not in message
