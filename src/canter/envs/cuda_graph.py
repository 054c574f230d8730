"""The env step as one CUDA graph (`EnvCfg.cuda_graph`, `--env.cuda-graph`).

On a GPU an env step of the warp backend is hundreds of small kernels (the dog: ~600 tensor operations
besides MuJoCo Warp's own), each paying ~10 µs of launch and dispatch: at a few thousand envs the step
is launch-bound. Captured once as a CUDA graph and replayed, the whole step (actions in, physics,
NaN guard, terminations, rewards, resets on masks, commands, events, observations) is one launch.

What makes it possible, and what the CPU tests hold:
- the step never synchronizes with the host (tests/core/test_syncguard.py) and issues one fixed tensor
  program whatever the state, resets included, so a graph captured from one step replays any step;
- state carried from one step to the next keeps its storage (updated in place, never rebound to a new
  tensor), so the graph reads and writes the tensors the eager code does (tests/envs/test_cuda_graph.py
  walks every task family's env for rebound tensors);
- the simulator joins the capture (`WarpSimulator.joined_capture`): MuJoCo Warp's kernels go on torch's
  capture stream, its conditional work (NaN guard, masked forward) becomes conditional graph nodes whose
  scratch memory was recorded by an eager step;
- every CUDA torch.Generator the env holds is registered with the graph, so each replay draws new
  numbers from the generator's advancing state.

The first `warmup` steps after construction (and after `invalidate()`) run eagerly; the next is captured
and replayed. The outputs are copies (the graph's own buffers are overwritten by the next replay). The
host-side bookkeeping of a step (the step counter) is kept by this class. A step that cannot be
captured raises a ConfigError naming the cause: an aborted capture leaves the generators registered
with it unusable, so there is no falling back to the eager step in the same env.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch.utils._pytree import tree_flatten, tree_unflatten

from canter.core.errors import ConfigError


class _PackedOutputs:
    """A step's outputs (a pytree of tensors) packed into one flat buffer per dtype inside the graph,
    so that handing the caller its own copy costs one copy per dtype, not one per tensor."""

    def __init__(self, tree: Any):
        self.leaves, self.spec = tree_flatten(tree)
        tensors = [t for t in self.leaves if isinstance(t, torch.Tensor)]
        self.dtypes = sorted({t.dtype for t in tensors}, key=str)
        self.slots: dict[int, tuple[int, int, int, tuple[int, ...]]] = {}  # id -> (dtype index, start, numel, shape)
        sizes = [0] * len(self.dtypes)
        self.unique: list[torch.Tensor] = []  # a tensor that appears twice is packed once
        for t in tensors:
            if id(t) not in self.slots:
                d = self.dtypes.index(t.dtype)
                self.slots[id(t)] = (d, sizes[d], t.numel(), tuple(t.shape))
                sizes[d] += t.numel()
                self.unique.append(t)

    def pack(self) -> list[torch.Tensor]:
        """Flat buffers of the tensors (run inside the capture: the graph fills them)."""
        groups: list[list[torch.Tensor]] = [[] for _ in self.dtypes]
        for t in self.unique:
            groups[self.slots[id(t)][0]].append(t.reshape(-1))
        return [torch.cat(group) for group in groups]

    def unpack(self, flats: list[torch.Tensor]) -> Any:
        """The tree with every tensor a view of `flats`."""
        def view(leaf: Any) -> Any:
            if not isinstance(leaf, torch.Tensor):
                return leaf
            d, start, numel, shape = self.slots[id(leaf)]
            return flats[d][start:start + numel].view(shape)

        return tree_unflatten([view(leaf) for leaf in self.leaves], self.spec)


def cuda_generators(root: object, limit: int = 10) -> list[torch.Generator]:
    """Every CUDA torch.Generator reachable from `root` through Canter objects, dicts, lists and
    tuples (an env's own, and any a term keeps), each once."""
    found: dict[int, torch.Generator] = {}
    seen: set[int] = set()

    def walk(obj: object, depth: int) -> None:
        if isinstance(obj, torch.Generator):
            if obj.device.type == "cuda":
                found.setdefault(id(obj), obj)
            return
        if depth > limit or id(obj) in seen or isinstance(obj, (torch.Tensor, str, bytes, int, float)):
            return
        seen.add(id(obj))
        if isinstance(obj, dict):
            for v in list(obj.values()):
                walk(v, depth + 1)
        elif isinstance(obj, (list, tuple)):
            for v in obj:
                walk(v, depth + 1)
        elif type(obj).__module__.startswith("canter") and hasattr(obj, "__dict__"):
            for v in list(vars(obj).values()):
                walk(v, depth + 1)

    walk(root, 0)
    return list(found.values())


class GraphedStep:
    """`step(actions)` of a ManagerBasedRLEnv on the warp backend and a CUDA device, replayed from one
    CUDA graph. `eager_step` is the env's own step; `env` provides `sim`, `device`, `num_envs`,
    `common_step_counter` and the `extras`/`obs_buf` attributes the eager step sets."""

    def __init__(self, env: Any, eager_step: Callable[[torch.Tensor], tuple], warmup: int = 3):
        self.env = env
        self.eager_step = eager_step
        self.warmup = warmup
        self.captures = 0  # how many times a graph was captured (tests, benchmarks)
        self.invalidate()

    def invalidate(self) -> None:
        """Drop the graph: the next steps run eagerly, then a new one is captured (after the env's
        tensors were replaced, e.g. by load_state_dict, or the simulator's arrays changed)."""
        self.graph: torch.cuda.CUDAGraph | None = None
        self._pending = self.warmup
        self._epoch = getattr(self.env.sim, "graph_epoch", 0)

    @property
    def active(self) -> bool:
        return self.graph is not None

    def __call__(self, actions: torch.Tensor) -> tuple:
        env = self.env
        if self.graph is not None and getattr(env.sim, "graph_epoch", 0) != self._epoch:
            self.invalidate()
        if self.graph is None:
            if self._pending > 0 or env._pending_log:
                # warm-up (lazy buffers, Warp modules, recorded scratch), or the first step after a
                # reset, whose extras carry the startup log once: eagerly
                self._pending = max(self._pending - 1, 0)
                return self.eager_step(actions)
            blocked = getattr(env.sim, "uncapturable", lambda: None)()
            if blocked is not None:
                raise ConfigError(f"env.cuda_graph: the env step cannot be captured as a CUDA graph: {blocked}; "
                                  "run without it")
            try:
                self._capture(actions)
            except Exception as err:
                reason = " ".join(str(err).split())[:300]
                raise ConfigError(f"env.cuda_graph: the env step could not be captured as a CUDA graph ({reason}); "
                                  "run without it (tests/core/test_syncguard.py finds what a step must not do)") from err
        graph = self.graph
        assert graph is not None
        self._actions.copy_(actions.detach())
        graph.replay()
        env.common_step_counter += 1
        env.obs_buf, env.extras = self._outputs[0], self._outputs[4]
        # the caller's own copy: the graph's buffers are overwritten by the next replay
        outputs = self._packed.unpack([flat.clone() for flat in self._flats])
        if env._pending_log:  # a reset since the capture: its startup log goes with this step, once
            outputs[4]["log"] = {**env._pending_log, **outputs[4]["log"]}
            env._pending_log = {}
        return outputs

    def _capture(self, actions: torch.Tensor) -> None:
        env = self.env
        device = env.device
        self._actions = actions.detach().to(device).clone()
        graph = torch.cuda.CUDAGraph()
        for generator in cuda_generators(env):
            graph.register_generator_state(generator)
        stream = torch.cuda.Stream(device=device)
        stream.wait_stream(torch.cuda.current_stream(device))
        counter = env.common_step_counter
        with torch.cuda.graph(graph, stream=stream, capture_error_mode="thread_local"), env.sim.joined_capture():
            outputs = self.eager_step(self._actions)
            packed = _PackedOutputs(outputs)
            flats = packed.pack()
        torch.cuda.current_stream(device).wait_stream(stream)
        env.common_step_counter = counter  # the capture ran the host code, not the step
        self._outputs, self._packed, self._flats = outputs, packed, flats
        self.graph = graph
        self.captures += 1
