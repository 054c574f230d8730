"""CUDA graphs of the learner's hot functions (`AlgoCfg.cuda_graph`, `--agent.algo.cuda-graph`).

On a GPU one PPO minibatch step (forward of actor and critic, losses, backward, gradient clip, fused
Adam) is a few hundred small kernels, and the policy's act a few dozen: at the minibatch sizes of
legged locomotion (tens of thousands of rows) the learner is launch-bound, not arithmetic-bound.
`GraphedFunction` captures such a function once as a CUDA graph and replays it: one launch per call.

How, and what it rests on:
- the function runs eagerly for its first `warmup` calls of each input signature (shapes, dtypes,
  non-tensor values and the caller's `key()`, e.g. the policy's train/eval mode): optimizer state,
  cuBLAS workspaces and lazy buffers are made there; then it is captured on a side stream, with its
  inputs read from static tensors that later calls fill with `copy_`;
- the captured function never synchronizes with the host (tests/core/test_syncguard.py holds the
  PPO update and act to that) and carries state in place: the optimizer's moments and step count
  (Adam with `capturable=True`), the learning rate (a () tensor the adaptive schedule writes with
  `copy_`), normalizer statistics, parameters and their gradients (allocated from the graph's own
  memory pool during the capture and reused by every replay);
- the CUDA generators it draws from are registered with the graph, so each replay draws new numbers;
- its outputs are the graph's own tensors: valid until the next call, so callers copy what they keep.

`invalidate()` drops the graphs (after a checkpoint replaced the optimizer's state tensors, say).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch.utils._pytree import tree_flatten, tree_unflatten

from canter.core.errors import ConfigError


def check_cuda_graph(algo_cfg: Any, device: torch.device | str | None = None, world_size: int = 1) -> None:
    """ConfigError where algo.cuda_graph is on and cannot run: a learner other than PPO and A2C, a
    device other than CUDA (when given), or torch.distributed (world_size > 1)."""
    if not algo_cfg.cuda_graph:
        return
    if algo_cfg.algo not in ("ppo", "a2c"):
        raise ConfigError(f"algo.cuda_graph: implemented for ppo and a2c, not {algo_cfg.algo!r}")
    if device is not None and torch.device(device).type != "cuda":
        raise ConfigError(f"algo.cuda_graph: CUDA graphs need a CUDA device; this run is on {device}")
    if world_size > 1:
        raise ConfigError("algo.cuda_graph: not supported under torch.distributed (the gradient all-reduce "
                          "is not captured); run without it")


class _Capture:
    def __init__(self, graph: torch.cuda.CUDAGraph, inputs: list[Any], outputs: Any):
        self.graph, self.inputs, self.outputs = graph, inputs, outputs


class GraphedFunction:
    """`function(*args)` (args: pytrees of tensors and Python values; returns a pytree of tensors)
    replayed from a CUDA graph per input signature, after `warmup` eager calls of that signature.

    name: what the error names when the capture fails. device: the CUDA device.
    generators: the CUDA torch.Generators the function draws from. key: extra signature (called per
    call, must be hashable), for host state the function branches on.
    """

    def __init__(self, function: Callable[..., Any], *, name: str, device: torch.device,
                 generators: Sequence[torch.Generator] = (), warmup: int = 2,
                 key: Callable[[], Any] = lambda: None):
        if device.type != "cuda":
            raise ConfigError(f"{name}: CUDA graphs need a CUDA device, not {device}")
        self.function = function
        self.name = name
        self.device = device
        self.generators = tuple(generators)
        self.warmup = warmup
        self.key = key
        self.captures = 0  # graphs captured so far (tests, benchmarks)
        self.replays = 0
        self._graphs: dict[Any, _Capture] = {}
        self._pending: dict[Any, int] = {}

    def invalidate(self) -> None:
        """Drop every graph: the next calls warm up and capture again."""
        self._graphs.clear()
        self._pending.clear()

    def __call__(self, *args: Any) -> Any:
        leaves, spec = tree_flatten(args)
        signature = (self.key(), tuple(
            (tuple(leaf.shape), leaf.dtype) if isinstance(leaf, torch.Tensor) else ("value", leaf) for leaf in leaves
        ))
        capture = self._graphs.get(signature)
        if capture is None:
            pending = self._pending.setdefault(signature, self.warmup)
            if pending > 0:
                self._pending[signature] = pending - 1
                return self.function(*args)
            capture = self._capture(signature, leaves, spec)
        for static, leaf in zip(capture.inputs, leaves, strict=True):
            if isinstance(static, torch.Tensor) and static is not leaf:
                static.copy_(leaf)
        capture.graph.replay()
        self.replays += 1
        return capture.outputs

    def _capture(self, signature: Any, leaves: list[Any], spec: Any) -> _Capture:
        inputs = [leaf.detach().clone() if isinstance(leaf, torch.Tensor) else leaf for leaf in leaves]
        static_args = tree_unflatten(inputs, spec)
        graph = torch.cuda.CUDAGraph()
        for generator in self.generators:
            graph.register_generator_state(generator)
        current = torch.cuda.current_stream(self.device)
        stream = torch.cuda.Stream(device=self.device)
        stream.wait_stream(current)
        try:
            with torch.cuda.graph(graph, stream=stream, capture_error_mode="thread_local"):
                outputs = self.function(*static_args)
        except Exception as err:
            reason = " ".join(str(err).split())[:300]
            raise ConfigError(f"{self.name}: could not be captured as a CUDA graph ({reason}); run without "
                              "algo.cuda_graph (tests/core/test_syncguard.py finds what it must not do)") from err
        current.wait_stream(stream)
        capture = _Capture(graph, inputs, outputs)
        self._graphs[signature] = capture
        self.captures += 1
        return capture
