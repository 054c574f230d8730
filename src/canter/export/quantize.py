"""int8 quantization of an exported policy, with the action error it costs.

Dynamic quantization: weights are stored as int8 (per output channel); activations are quantized
per call from their observed range, so no calibration data is needed. ONNX: onnxruntime's
`quantize_dynamic` turns each MatMul into DynamicQuantizeLinear + MatMulInteger with 7-bit weights,
which no x86 CPU saturates (recurrent layers stay float: ONNX Runtime has no quantized GRU, and its
DynamicQuantizeLSTM lost 10 % of the action range on an AVX2 CPU). TorchScript: torch's
`quantize_dynamic` replaces the Linear layers and an LSTM with dynamically quantized ones; a GRU stays
float as in ONNX Runtime (torch's quantized GRU cost 10x the action error of the int8 MLP layers on
our test policies).
"""

from __future__ import annotations

import logging
import tempfile
import warnings
from pathlib import Path

import onnx
import torch
from torch import nn

from canter.core.errors import CanterError
from canter.export.metadata import PolicyMetadata
from canter.export.module import ExportableActor
from canter.export.onnx_export import set_metadata

QUANTIZATION = "int8-dynamic"


def quantize_onnx(fp32_path: str | Path, int8_path: str | Path, metadata: PolicyMetadata) -> Path:
    """Writes the int8 model of the fp32 ONNX file `fp32_path` to `int8_path`, carrying `metadata`
    (with quantization set; the caller adds the measured error with `annotate_onnx`)."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    int8_path = Path(int8_path)
    int8_path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / "int8.onnx"
        logging.disable(logging.WARNING)  # the quantizer advises "pre-processing" on the root logger
        try:
            # 7-bit weights (reduce_range) and MatMuls only: on a CPU without VNNI (AVX2, plain AVX-512)
            # ONNX Runtime's int8 kernels saturate full-range weights, and its DynamicQuantizeLSTM
            # kept an error of 10 % of the largest action even with 7 bits (BENCHMARKS.md §20)
            quantize_dynamic(str(fp32_path), str(raw), per_channel=True, reduce_range=True,
                             weight_type=QuantType.QInt8, op_types_to_quantize=["MatMul", "Gemm"])
        except Exception as err:
            raise CanterError(f"int8 quantization failed: {type(err).__name__}: {' '.join(str(err).split())[:160]}") from err
        finally:
            logging.disable(logging.NOTSET)
        model = onnx.load(str(raw))
    metadata.quantization = QUANTIZATION
    set_metadata(model, metadata)
    onnx.save(model, str(int8_path))
    return int8_path


def annotate_onnx(path: str | Path, metadata: PolicyMetadata) -> None:
    """Rewrites the metadata of an existing ONNX file (e.g. to add int8_max_action_error)."""
    model = onnx.load(str(path))
    set_metadata(model, metadata)
    onnx.save(model, str(path))


def quantize_actor(actor: ExportableActor) -> nn.Module:
    """A dynamically int8-quantized copy of `actor` (Linear layers and an LSTM)."""
    quantization = torch.ao.quantization
    # per output channel for the Linear weights, like the ONNX path (per tensor doubled the error)
    spec = {nn.Linear: quantization.per_channel_dynamic_qconfig, nn.LSTM: quantization.default_dynamic_qconfig}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return quantization.quantize_dynamic(actor, spec, dtype=torch.qint8)
