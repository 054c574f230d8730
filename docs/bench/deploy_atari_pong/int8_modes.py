"""Dynamic vs static int8 of a trained Atari ONNX policy: logit error, greedy agreement, latency (1 thread).

Usage: python docs/bench/deploy_atari_pong/int8_modes.py RUN_DIR (after `canter export RUN_DIR`). 8 games played
by the fp32 file give 400 x 8 frame stacks: calibration from the first 200 steps (every 4th), errors and agreement
over the last 200; latency: 3,000 single calls after 200 warm-up calls. Static int8 is not a Canter mode: this
script measured whether it should be (BENCHMARKS.md §9).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
from onnxruntime.quantization import (
    CalibrationDataReader,
    CalibrationMethod,
    QuantFormat,
    QuantType,
    quantize_dynamic,
    quantize_static,
)

from canter.envs.atari import AtariEnv, AtariEnvCfg
from canter.export.runtime import PolicyRuntime, make_session

fp32 = Path(sys.argv[1]) / "exported" / "policy.onnx"
runtime = PolicyRuntime(fp32)
env = AtariEnv(AtariEnvCfg(num_envs=8, num_threads=1, seed=7).evaluation())
obs, _ = env.reset()
frames = []
for _ in range(400):
    frames.append(obs["policy"].numpy().copy())
    obs, *_ = env.step(torch.from_numpy(runtime.act(None, {"policy": frames[-1]})))
calibration, held_out = frames[:200:4], frames[200:]


class Reader(CalibrationDataReader):
    def __init__(self) -> None:
        self.frames = iter(calibration)

    def get_next(self) -> dict[str, np.ndarray] | None:
        stack = next(self.frames, None)
        return None if stack is None else {"image_policy": stack}


out = Path(tempfile.mkdtemp())
files = {"fp32": fp32, "dynamic": out / "dynamic.onnx"}
quantize_dynamic(str(fp32), str(files["dynamic"]), per_channel=True, reduce_range=True, weight_type=QuantType.QInt8,
                 op_types_to_quantize=["MatMul", "Gemm"])  # what `canter export --quantize int8` writes
for name, method in (("static-minmax", CalibrationMethod.MinMax), ("static-pct", CalibrationMethod.Percentile)):
    files[name] = out / f"{name}.onnx"
    quantize_static(str(fp32), str(files[name]), Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                    weight_type=QuantType.QInt8, activation_type=QuantType.QUInt8, calibrate_method=method,
                    op_types_to_quantize=["Conv", "MatMul"], reduce_range=True,
                    extra_options={"CalibPercentile": 99.99} if method == CalibrationMethod.Percentile else {})
reference = None
for name, path in files.items():
    session = make_session(path, 1)
    logits = np.concatenate([session.run(None, {"image_policy": stack})[0] for stack in held_out])
    reference = logits if reference is None else reference
    error = np.abs(logits - reference).max()
    agree = (logits.argmax(1) == reference.argmax(1)).mean()
    one = held_out[0][:1]
    for _ in range(200):
        session.run(None, {"image_policy": one})
    times = []
    for _ in range(3000):
        start = time.perf_counter_ns()
        session.run(None, {"image_policy": one})
        times.append(time.perf_counter_ns() - start)
    print(f"{name:14s} max|dlogit| {error:.4f}  agree {100 * agree:.2f}%  latency p50 {np.median(times) / 1e3:.0f} us  "
          f"p99 {np.percentile(times, 99) / 1e3:.0f} us  |logit| max {np.abs(reference).max():.2f}")
