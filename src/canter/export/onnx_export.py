"""ONNX export: the graph of an ExportableActor written node by node, with the metadata attached.

The graph is built directly with `onnx.helper` rather than traced: it is small (MatMul/Add per layer,
one GRU/LSTM node per recurrent layer), has a dynamic batch axis on every input and output, does not
depend on torch's exporters (whose TorchScript path is deprecated), and writes in milliseconds.
MatMul + Add instead of Gemm lets onnxruntime's dynamic int8 quantization pick the layers up.

Inputs: obs (batch, obs_dim) [, image_<group> (batch, C, H, W) ...] [, h_in (L, batch, H) [, c_in (L, batch, H)]];
outputs: actions (batch, num_actions) [, h_out [, c_out]], float32 (an image input is uint8 or float32,
as the env emits it: uint8 is cast and divided by 255, as in training). An image goes through its
CNN as Conv/Relu nodes, Flatten and MatMul/Add, and its features are concatenated after obs. A policy
that reads images only (an Atari policy: obs_dim 0) has no obs input. A categorical policy's actions
are its logits (the greedy action is their argmax; the metadata's action field says so).

Gate orders: PyTorch stores GRU gates as (r, z, n) and ONNX as (z, r, h); PyTorch's GRU applies the
reset gate after the recurrent matmul (ONNX linear_before_reset=1). LSTM: PyTorch (i, f, g, o),
ONNX (i, o, f, c).
"""

from __future__ import annotations

from pathlib import Path
from typing import cast

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

from canter.export.metadata import PolicyMetadata
from canter.export.module import ExportableActor

OPSET = 17
IR_VERSION = 8  # read by every onnxruntime release since 1.10
_GATE_ORDER = {"gru": (1, 0, 2), "lstm": (0, 3, 1, 2)}  # ONNX gate k takes PyTorch gate _GATE_ORDER[k]


def io_names(architecture: str, image_groups: tuple[str, ...] | list[str] = (), *,
             vector_input: bool = True) -> tuple[list[str], list[str]]:
    """(inputs, outputs) of the graph of an architecture reading the given image groups (and a
    vector observation `obs` unless vector_input is False)."""
    states = {"mlp": [], "gru": ["h"], "lstm": ["h", "c"]}[architecture]
    images = [image_input_name(g) for g in image_groups]
    vector = ["obs"] if vector_input else []
    return [*vector, *images] + [f"{s}_in" for s in states], ["actions"] + [f"{s}_out" for s in states]


def image_input_name(group: str) -> str:
    """The graph input of an image observation group."""
    return f"image_{group}"


_ONNX_DTYPES = {torch.uint8: TensorProto.UINT8, torch.float32: TensorProto.FLOAT}


class _Graph:
    """Collects nodes and initializers under unique names."""

    def __init__(self) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []

    def const(self, name: str, value: np.ndarray) -> str:
        self.initializers.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def node(self, op: str, inputs: list[str], name: str, outputs: int = 1, **attrs) -> list[str]:
        names = [name] if outputs == 1 else [f"{name}_{k}" for k in range(outputs)]
        self.nodes.append(helper.make_node(op, inputs, names, name=name, **attrs))
        return names


def _f32(tensor: torch.Tensor) -> np.ndarray:
    return tensor.detach().cpu().float().numpy()


def _reorder_gates(weight: np.ndarray, architecture: str) -> np.ndarray:
    """(G·H, ...) PyTorch gate blocks -> ONNX gate order."""
    blocks = np.split(weight, len(_GATE_ORDER[architecture]), axis=0)
    return np.concatenate([blocks[k] for k in _GATE_ORDER[architecture]], axis=0)


def _recurrent_layers(graph: _Graph, actor: ExportableActor, x: str, state_inputs: list[str]) -> tuple[str, list[str]]:
    """One ONNX GRU/LSTM node per layer over x, starting from the graph's state inputs (h_in[, c_in]);
    returns (features (batch, H), final states (L, batch, H))."""
    rnn, arch = actor.rnn, actor.architecture
    assert rnn is not None
    seq = graph.node("Unsqueeze", [x, graph.const("axis0", np.array([0], dtype=np.int64))], "seq_in")[0]
    finals: list[list[str]] = [[] for _ in actor.state_names]
    for layer in range(actor.num_layers):
        w = _reorder_gates(_f32(getattr(rnn, f"weight_ih_l{layer}")), arch)[None]
        r = _reorder_gates(_f32(getattr(rnn, f"weight_hh_l{layer}")), arch)[None]
        b = np.concatenate([_reorder_gates(_f32(getattr(rnn, f"bias_ih_l{layer}")), arch),
                            _reorder_gates(_f32(getattr(rnn, f"bias_hh_l{layer}")), arch)])[None]
        starts = graph.const(f"l{layer}_start", np.array([layer], dtype=np.int64))
        ends = graph.const(f"l{layer}_end", np.array([layer + 1], dtype=np.int64))
        states = [graph.node("Slice", [name, starts, ends, "axis0"], f"{s}_in_l{layer}")[0]
                  for s, name in zip(actor.state_names, state_inputs, strict=True)]
        weights = [graph.const(f"{arch}{layer}_{k}", v) for k, v in (("W", w), ("R", r), ("B", b))]
        attrs = {"hidden_size": actor.hidden_dim}
        if arch == "gru":
            attrs["linear_before_reset"] = 1
        outputs = graph.node(arch.upper(), [seq, *weights, "", *states], f"{arch}{layer}",
                             outputs=1 + len(states), **attrs)
        seq = graph.node("Squeeze", [outputs[0], graph.const(f"axis1_l{layer}", np.array([1], dtype=np.int64))],
                         f"seq_l{layer}")[0]
        for k, final in enumerate(outputs[1:]):
            finals[k].append(final)
    features = graph.node("Squeeze", [seq, "axis0"], "features")[0]
    state_outputs = [graph.node("Concat", names, f"{s}_out", axis=0)[0]
                     for s, names in zip(actor.state_names, finals, strict=True)]
    return features, state_outputs


def _image_features(graph: _Graph, actor: ExportableActor, index: int, name: str) -> str:
    """The CNN of image input `name`: (batch, C, H, W) -> (batch, output_dim)."""
    encoder, x = actor.encoders[index], name
    if actor.image_dtypes[index] == torch.uint8:
        x = graph.node("Cast", [x], f"img{index}_float", to=TensorProto.FLOAT)[0]
        x = graph.node("Div", [x, graph.const(f"img{index}_255", np.array(255.0, dtype=np.float32))], f"img{index}_unit")[0]
    op = {"elu": "Elu", "relu": "Relu", "tanh": "Tanh"}
    layers = list(cast(torch.nn.Sequential, encoder.net))
    for k, layer in enumerate(layers):
        if isinstance(layer, torch.nn.Conv2d):
            weights = [graph.const(f"img{index}_conv{k}_w", _f32(layer.weight)),
                       graph.const(f"img{index}_conv{k}_b", _f32(cast(torch.Tensor, layer.bias)))]
            x = graph.node("Conv", [x, *weights], f"img{index}_conv{k}", kernel_shape=list(layer.kernel_size),
                           strides=list(layer.stride))[0]
        elif isinstance(layer, torch.nn.Flatten):
            x = graph.node("Flatten", [x], f"img{index}_flat{k}", axis=1)[0]
        elif isinstance(layer, torch.nn.Linear):
            x = graph.node("MatMul", [x, graph.const(f"img{index}_fc{k}_weight", _f32(layer.weight).T.copy())], f"img{index}_fc{k}")[0]
            x = graph.node("Add", [x, graph.const(f"img{index}_fc{k}_bias", _f32(layer.bias))], f"img{index}_fc{k}_out")[0]
        else:
            name_of = {torch.nn.ELU: "elu", torch.nn.ReLU: "relu", torch.nn.Tanh: "tanh"}[type(layer)]
            x = graph.node(op[name_of], [x], f"img{index}_{name_of}{k}")[0]
    return x


def build_onnx(actor: ExportableActor, metadata: PolicyMetadata) -> onnx.ModelProto:
    """The ONNX model of `actor` with `metadata` in its metadata_props (checked with onnx.checker)."""
    graph = _Graph()
    vector = actor.obs_dim > 0
    inputs, outputs = io_names(actor.architecture, actor.image_groups, vector_input=vector)
    images = inputs[int(vector) : int(vector) + len(actor.image_groups)]
    parts = []
    if vector:
        x = inputs[0]
        if actor.obs_clip is not None or not torch.all(actor.obs_scale == 1) or torch.any(actor.obs_shift != 0):
            x = graph.node("Mul", [x, graph.const("obs_scale", _f32(actor.obs_scale))], "obs_scaled")[0]
            x = graph.node("Add", [x, graph.const("obs_shift", _f32(actor.obs_shift))], "obs_shifted")[0]
        if actor.obs_clip is not None:
            bounds = [graph.const(n, np.array(v, dtype=np.float32)) for n, v in (("clip_lo", -actor.obs_clip), ("clip_hi", actor.obs_clip))]
            x = graph.node("Clip", [x, *bounds], "obs_normalized")[0]
        parts.append(x)
    parts += [_image_features(graph, actor, k, name) for k, name in enumerate(images)]
    x = parts[0] if len(parts) == 1 else graph.node("Concat", parts, "policy_input", axis=1)[0]
    if actor.rnn is not None:  # the state outputs (h_out, c_out) are the Concat nodes of the layers
        x, _ = _recurrent_layers(graph, actor, x, inputs[int(vector) + len(images) :])
    for index, layer in enumerate(actor.layers):
        assert isinstance(layer, torch.nn.Linear)
        last = index == len(actor.layers) - 1
        w = graph.const(f"fc{index}_weight", _f32(layer.weight).T.copy())
        x = graph.node("MatMul", [x, w], f"fc{index}_matmul")[0]
        x = graph.node("Add", [x, graph.const(f"fc{index}_bias", _f32(layer.bias))], "actions" if last else f"fc{index}")[0]
        if not last:
            op = {"elu": "Elu", "relu": "Relu", "tanh": "Tanh"}[actor.activation]
            x = graph.node(op, [x], f"fc{index}_{actor.activation}")[0]
    value_infos_in = [helper.make_tensor_value_info("obs", TensorProto.FLOAT, ["batch", actor.obs_dim])] if vector else []
    value_infos_in += [helper.make_tensor_value_info(n, _ONNX_DTYPES[dtype], ["batch", *shape])
                       for n, dtype, shape in zip(images, actor.image_dtypes, actor.image_shapes, strict=True)]
    value_infos_in += [helper.make_tensor_value_info(n, TensorProto.FLOAT, [actor.num_layers, "batch", actor.hidden_dim])
                       for n in inputs[int(vector) + len(images) :]]
    value_infos_out = [helper.make_tensor_value_info("actions", TensorProto.FLOAT, ["batch", actor.num_actions])]
    value_infos_out += [helper.make_tensor_value_info(n, TensorProto.FLOAT, [actor.num_layers, "batch", actor.hidden_dim])
                        for n in outputs[1:]]
    model = helper.make_model(
        helper.make_graph(graph.nodes, "canter_policy", value_infos_in, value_infos_out, graph.initializers),
        opset_imports=[helper.make_opsetid("", OPSET)],
        producer_name="canter",
        producer_version=metadata.canter_version,
    )
    model.ir_version = IR_VERSION
    set_metadata(model, metadata)
    onnx.checker.check_model(model)
    return model


def set_metadata(model: onnx.ModelProto, metadata: PolicyMetadata) -> None:
    """Replaces the model's metadata_props with `metadata`'s pairs."""
    del model.metadata_props[:]
    for key, value in metadata.to_props().items():
        entry = model.metadata_props.add()
        entry.key, entry.value = key, value


def save_onnx(actor: ExportableActor, metadata: PolicyMetadata, path: str | Path) -> Path:
    """Writes the ONNX file (parent folders created) and returns its path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(build_onnx(actor, metadata), str(path))
    return path
