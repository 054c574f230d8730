"""Export of policies with image observation groups (CNN encoders): ONNX and TorchScript files give
the torch policy's actions on random images (uint8 RGB and float depth), the graph declares the image
input's shape and dtype, and a file whose CNN reads the channels in another order fails parity."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
import torch

from canter.core.errors import CanterError
from canter.core.rng import make_generator
from canter.export import parity
from canter.export.describe import describe_policy
from canter.export.module import ExportableActor
from canter.export.onnx_export import save_onnx
from canter.export.runtime import PolicyRuntime
from canter.export.torchscript import load_torchscript, save_torchscript
from canter.rl.config import CnnCfg, PolicyCfg
from canter.rl.factory import make_policy

IMAGE = (3, 36, 36)


def image_policy(env, rnn_type="none", dtype=torch.uint8):
    shapes = {**env.observation_shapes, "wrist": IMAGE}
    cfg = PolicyCfg(actor_hidden_dims=(32,), critic_hidden_dims=(8,), actor_obs_groups=("wrist", "policy"),
                    image_obs_groups=("wrist",), normalize_obs=True, rnn_type=rnn_type, rnn_hidden_dim=16,
                    cnn=CnnCfg(channels=(8, 16), kernel_sizes=(8, 4), strides=(4, 2), output_dim=24))
    policy = make_policy(shapes, env.num_actions, cfg, init_generator=make_generator(5, "cpu"))
    with torch.no_grad():  # an output layer of realistic gain, so that 1e-5 means something
        policy.actor[-1].weight.mul_(100.0)
    policy.eval()
    return policy, ExportableActor(policy, {"wrist": dtype})


@pytest.mark.parametrize(("rnn_type", "dtype"), [("none", torch.uint8), ("gru", torch.uint8), ("none", torch.float32)])
def test_onnx_and_torchscript_match_torch_with_an_image_input(env, tmp_path, rnn_type, dtype):
    policy, actor = image_policy(env, rnn_type, dtype)
    metadata = describe_policy(env, actor, "dog-flat")
    name = str(dtype).removeprefix("torch.")
    assert metadata.image_inputs == [{"name": "image_wrist", "group": "wrist", "shape": list(IMAGE), "dtype": name}]
    path = save_onnx(actor, metadata, tmp_path / "policy.onnx")
    graph = onnx.load(str(path)).graph
    assert [i.name for i in graph.input][:2] == ["obs", "image_wrist"]
    image_type = graph.input[1].type.tensor_type
    assert image_type.elem_type == (onnx.TensorProto.UINT8 if dtype == torch.uint8 else onnx.TensorProto.FLOAT)
    assert [d.dim_value for d in image_type.shape.dim[1:]] == list(IMAGE)
    recording = parity.random_recording(actor.obs_dim, 6, 5, seed=3, images={"wrist": (IMAGE, name)})
    reference = parity.torch_actions(policy, recording)
    assert np.abs(reference).max() > 0.3
    onnx_error = parity.max_error(parity.onnx_actions(PolicyRuntime(path), recording), reference)
    assert parity.within_tolerance(onnx_error, reference)
    save_torchscript(actor, metadata, tmp_path / "policy.pt")
    module, _ = load_torchscript(tmp_path / "policy.pt")
    states = (len(actor.state_names), actor.num_layers, actor.hidden_dim)
    script_error = parity.max_error(parity.module_actions(module, *states, recording), reference)
    assert parity.within_tolerance(script_error, reference)


def test_a_cnn_reading_channels_in_another_order_fails_parity(env, tmp_path):
    policy, actor = image_policy(env)
    with torch.no_grad():  # an exporter that fed the CNN BGR instead of RGB
        first_conv = actor.encoders[0].net[0]
        first_conv.weight.copy_(first_conv.weight.flip(1))
    path = save_onnx(actor, describe_policy(env, actor, "dog-flat"), tmp_path / "bgr.onnx")
    recording = parity.random_recording(actor.obs_dim, 4, 5, seed=8, images={"wrist": (IMAGE, "uint8")})
    reference = parity.torch_actions(policy, recording)
    error = parity.max_error(parity.onnx_actions(PolicyRuntime(path), recording), reference)
    assert not parity.within_tolerance(error, reference)


def test_runtime_names_a_missing_or_misshapen_image(env, tmp_path):
    _, actor = image_policy(env)
    runtime = PolicyRuntime(save_onnx(actor, describe_policy(env, actor, "dog-flat"), tmp_path / "p.onnx"))
    obs = np.zeros(actor.obs_dim, dtype=np.float32)
    with pytest.raises(CanterError, match="image 'wrist' is missing"):
        runtime.act(obs)
    with pytest.raises(CanterError, match=r"expects uint8\(1, 3, 36, 36\) \(channels first\)"):
        runtime.act(obs, {"wrist": np.zeros((36, 36, 3), dtype=np.uint8)})
    assert runtime.act(obs, {"wrist": np.zeros(IMAGE, dtype=np.uint8)}).shape == (actor.num_actions,)
