"""ONNX export: the file gives the torch policy's actions for MLP, GRU and LSTM, on random and recorded
observations, at any batch size, with the normalizer folded in.

Tolerance (parity.within_tolerance): |Δa| ≤ 1e-5 · max(1, max |a|): 1e-5 absolute for actions of
order 1, relative for the large actions that far out-of-distribution random observations produce
(float32 carries ~7 digits)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest

from canter.export import parity
from canter.export.describe import describe_policy
from canter.export.module import ExportableActor
from canter.export.onnx_export import save_onnx
from canter.export.runtime import PolicyRuntime

from .helpers import ARCHITECTURES, trained_looking_policy


def _export(env, policy, path):
    actor = ExportableActor(policy)
    return save_onnx(actor, describe_policy(env, actor, "dog-flat"), path), actor


@pytest.mark.parametrize("architecture", ARCHITECTURES)
def test_onnx_matches_torch_on_random_and_recorded_observations(env, policies, tmp_path, architecture):
    policy = policies[architecture]
    path, actor = _export(env, policy, tmp_path / "policy.onnx")
    recorded = parity.record_observations(env, policy, 30)
    recorded.starts[12, 1] = recorded.starts[20, 3] = True  # episode restarts mid-sequence zero those states
    for recording in (parity.random_recording(actor.obs_dim, 15, 5, seed=1), recorded):
        reference = parity.torch_actions(policy, recording)
        actions = parity.onnx_actions(PolicyRuntime(path), recording)
        assert np.abs(reference).max() > 0.3  # actions of a realistic size, so 1e-5 means something
        assert parity.within_tolerance(parity.max_error(actions, reference), reference)


@pytest.mark.parametrize("architecture", ARCHITECTURES)
def test_graph_has_a_dynamic_batch_axis_and_explicit_state(env, policies, tmp_path, architecture):
    path, actor = _export(env, policies[architecture], tmp_path / "policy.onnx")
    graph = onnx.load(str(path)).graph
    names = {"mlp": ["obs"], "gru": ["obs", "h_in"], "lstm": ["obs", "h_in", "c_in"]}[architecture]
    assert [i.name for i in graph.input] == names
    assert [o.name for o in graph.output] == ["actions"] + [n.replace("_in", "_out") for n in names[1:]]
    assert graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    for value in list(graph.input[1:]) + list(graph.output[1:]):
        dims = value.type.tensor_type.shape.dim
        assert (dims[0].dim_value, dims[1].dim_param, dims[2].dim_value) == (actor.num_layers, "batch", 16)
    runtime = PolicyRuntime(path)
    single = [runtime.act(o).copy() for o in parity.random_recording(actor.obs_dim, 3, 1, seed=2).obs[:, 0]]
    runtime.reset(7)
    batched = [runtime.act(np.repeat(o[None], 7, axis=0)) for o in parity.random_recording(actor.obs_dim, 3, 1, seed=2).obs[:, 0]]
    for one, many in zip(single, batched, strict=True):
        assert np.abs(many - one[None]).max() < 1e-6  # every row of a batch is the same robot


@pytest.mark.parametrize("architecture", ["mlp", "gru"])
def test_unclipped_normalizer_is_folded_into_the_first_layer(env, tmp_path, architecture):
    policy = trained_looking_policy(env, architecture, clip=None, seed=3)
    path, actor = _export(env, policy, tmp_path / "folded.onnx")
    assert actor.normalizer == "folded"
    ops = [node.op_type for node in onnx.load(str(path)).graph.node]
    assert "Clip" not in ops and ops[0] in ("MatMul", "Unsqueeze")  # no normalizer nodes left
    recording = parity.random_recording(actor.obs_dim, 10, 4, seed=4)
    reference = parity.torch_actions(policy, recording)
    assert parity.within_tolerance(parity.max_error(parity.onnx_actions(PolicyRuntime(path), recording), reference), reference)
