"""Host synchronizations, found on the CPU: HostSyncGuard flags what would stall a GPU; the warp
backend's step (NaN guard included) has none, the env step of every task family on the warp backend
has none (resets on masks) and issues the same tensor program every step, resets or not (what a CUDA
graph of the step would replay), and a PPO iteration keeps only its one copy of the statistics, so a
new one anywhere fails here."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_map

from canter.core.syncguard import HostSyncError, HostSyncGuard


def test_guard_flags_each_kind_of_host_synchronization():
    x = torch.arange(6.0)
    ids = torch.tensor([1, 3])
    mask = x > 2
    cases = {
        "item": lambda: x.sum().item(),
        "tolist": lambda: x.tolist(),
        "__bool__": lambda: bool(x.any()),
        "__int__": lambda: int(x[0]),
        "__float__": lambda: float(x[0]),
        "nonzero": lambda: mask.nonzero(),
        "boolean-mask indexing": lambda: x[mask],
        "boolean-mask assignment": lambda: x.__setitem__(mask, 0.0),
        "host value written through a tensor index": lambda: x.__setitem__(ids, 0.0),
        "tensor of host data": lambda: torch.tensor([1.0, 2.0]),
        "numpy": lambda: x.numpy(),
        "cpu": lambda: x.cpu(),
        "a Python list as an index": lambda: x[[3, 0, 1]],
        "a 0-dim tensor as an index": lambda: x[ids[0]],
        "linalg_solve checking its result on the host": lambda: torch.linalg.solve(torch.eye(2), torch.ones(2)),
    }
    for what, call in cases.items():
        guard = HostSyncGuard("error")
        with pytest.raises(HostSyncError, match=re.escape(what)), guard:
            call()


def test_guard_passes_device_side_equivalents():
    x = torch.arange(6.0)
    ids = torch.tensor([1, 3])
    mask = x > 2
    with HostSyncGuard("error"):
        x.index_fill_(0, ids, 0.0)
        y = torch.where(mask, x, -x)
        x[:] = 1.0  # a fill through a slice, no copy
        x.masked_fill_(mask, 2.0)
        torch.nonzero_static(mask, size=6)
        torch.linalg.solve_ex(torch.eye(2), torch.ones(2))  # info stays on the device
        torch.roll(x, 1, dims=0)
        z = y.sum() + mask.any()
    assert z.dtype == torch.float32


def test_guard_records_call_sites_inside_canter():
    from canter.core.math import quat_rotate  # a canter frame on the stack

    guard = HostSyncGuard("record")
    with guard:
        torch.zeros(3).tolist()
    assert guard.sites and all("tolist" in site for site in guard.sites)
    assert callable(quat_rotate)


# ------------------------------------------------------------------------------------ warp backend

pytest.importorskip("mujoco_warp")

FAMILIES = (
    "cartpole", "ant", "dog-flat", "dog-rough", "dog-stones", "arm-grasp-state", "arm-grasp", "humanoid-stairs", "hand-cube-dr",
)
# the humanoid's PPO iteration runs with symmetry augmentation and the mirror loss on
EXTRA_FLAGS = {"humanoid-stairs": ["--agent.algo.symmetry", "both"]}

# nothing synchronizes per env step: resets, command resampling, interval events and curricula run on
# masks (canter.core.selection), the NaN guard and the reset's forward under Warp conditionals
STEP_ALLOWED: tuple[str, ...] = ()
# once per iteration: the statistics (one device-to-host copy, one all-reduce of host floats)
ITERATION_ALLOWED = (
    *STEP_ALLOWED,
    "tolist at rl/runner.py",
    "tensor of host data at rl/runner.py",
)


def _signature(arg: object) -> object:
    if isinstance(arg, torch.Tensor):
        return ("tensor", tuple(arg.shape), arg.dtype)
    if isinstance(arg, torch.Generator):  # its Python wrapper differs from call to call
        return ("generator", arg.device)
    return arg


class _TensorProgram(TorchDispatchMode):
    """The sequence of (operation, input shapes) a block issues."""

    def __enter__(self):
        self.ops: list[tuple[str, tuple]] = []
        return super().__enter__()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        # tensors by shape, every other argument (Python scalars included) by value: a captured graph
        # bakes those in, so a scalar that changed from step to step would be frozen by the graph
        signature = tree_map(_signature, (args, kwargs or {}))
        self.ops.append((str(func), repr(signature)))
        return func(*args, **(kwargs or {}))


# what a step may rebind to new tensors: its outputs and per-step caches, written before they are read
REBOUND_OUTPUTS = ("env.extras", "env.obs_buf", "env.sim.nonfinite", "env.scene._cache", "env.curriculum_manager.state",
                   "env.action_manager.executed",  # the action the actuators get this step
                   "env.action_manager._stateful['controller'].controller.body.last_info",  # the QP's report
                   "env.action_manager._stateful['controller'].targets")  # this tick's, set before use


def _storage(obj: object, path: str = "env", out: dict | None = None, seen: set | None = None) -> dict[str, object]:
    """Every tensor (by storage address) and Python scalar reachable from the env through Canter
    objects, dicts, lists and tuples, by attribute path."""
    out = {} if out is None else out
    seen = set() if seen is None else seen
    if isinstance(obj, torch.Tensor):
        out[path] = ("tensor", obj.data_ptr())
    elif isinstance(obj, (bool, int, float, str)):
        out[path] = obj
    elif id(obj) not in seen and path.count(".") + path.count("[") < 12:
        seen.add(id(obj))
        if isinstance(obj, dict):
            items = [(f"{path}[{k!r}]", v) for k, v in obj.items()]
        elif isinstance(obj, (list, tuple)):
            items = [(f"{path}[{i}]", v) for i, v in enumerate(obj)]
        elif type(obj).__module__.startswith("canter") and hasattr(obj, "__dict__"):
            items = [(f"{path}.{k}", v) for k, v in vars(obj).items()]
        else:
            items = []
        for key, value in items:
            _storage(value, key, out, seen)
    return out


def _warp_env(task: str, num_envs: int = 8, *flags: str):
    from canter.runs.args import make_env, parse_train_args

    args = parse_train_args(task, ["--backend", "warp", "--num-envs", str(num_envs), "--quiet", *EXTRA_FLAGS.get(task, []),
                                   *flags])
    return args, make_env(args)


@pytest.mark.parametrize("task", FAMILIES)
def test_warp_simulator_step_never_reads_the_device_on_the_host(task):
    """sim.step (substeps, bad-control handling, NaN guard with its reset + forward) under the error guard,
    with one env blown up so that the guard's reset branch runs."""
    _, env = _warp_env(task)
    env.reset()
    sim = env.sim
    sim.step(1)  # kernels built before the guard (the guard does not care, but keeps the test short)
    sim.qvel[2] = float("nan")
    before = int(sim.nonfinite_total)
    with HostSyncGuard("error"):
        sim.step(1)
        sim.step(1)
    assert int(sim.nonfinite_total) == before + 1
    assert torch.isfinite(sim.qvel).all()
    assert not bool(sim.nonfinite.any())


def _sites(guard: HostSyncGuard) -> set[str]:
    return {site.split(":")[0] for site in guard.sites}


@pytest.mark.parametrize("task", FAMILIES)
def test_env_step_and_ppo_iteration_on_warp_keep_only_the_listed_host_syncs(task):
    from canter.rl.runner import OnPolicyRunner

    # short iterations (Warp's CPU device runs its kernels on one core): the code paths are the same
    args, env = _warp_env(task, 8, "--agent.algo.num-steps-per-env", "4", "--agent.algo.num-learning-epochs", "1")
    obs = env.reset()[0]
    with tempfile.TemporaryDirectory() as tmp:
        expert = None
        if args.agent.algo.algo == "dagger":
            from canter.runs.args import task_expert

            expert = task_expert(task, args, env)
        runner = OnPolicyRunner(env, args.agent, Path(tmp), seed=0, cpu_physics=False, expert=expert)
        runner.algorithm.train_mode()
        obs, _ = runner.run_iteration(obs, None)
        step_guard = HostSyncGuard("record")
        generator = torch.Generator().manual_seed(0)
        env.episode_length_buf[: env.num_envs // 2] = env.max_episode_length - 4  # time-outs mid-window
        programs = []
        before = _storage(env)
        with step_guard:
            for _ in range(12):
                with _TensorProgram() as program:
                    obs = env.step(torch.rand(env.num_envs, env.num_actions, generator=generator) * 2 - 1)[0]
                programs.append(program.ops)
        timed_out = env.episode_length_buf[: env.num_envs // 2] < 12  # those envs did reset in the window
        after = _storage(env)
        iteration_guard = HostSyncGuard("record")
        with iteration_guard:
            runner.run_iteration(obs, None)
    unexpected = {s for s in _sites(step_guard) if not s.startswith(STEP_ALLOWED)}
    assert not unexpected, step_guard.report()
    # one tensor program per step, with or without resets: what a CUDA graph of the step would replay
    assert all(ops == programs[0] for ops in programs), [len(ops) for ops in programs]
    assert bool(timed_out.all())
    # state carried between steps keeps its storage and its host values: a captured step reads it there
    changed = sorted(k for k in before if k in after and before[k] != after[k])
    carried = [k for k in changed if not k.startswith(REBOUND_OUTPUTS) and k != "env.common_step_counter"]
    assert changed and not carried, carried
    unexpected = {s for s in _sites(iteration_guard) if not s.startswith(ITERATION_ALLOWED)}
    assert not unexpected, iteration_guard.report()
    # the per-iteration statistics cost one copy to the host (plus the all-reduce), not one per value
    copies = sum(n for site, n in iteration_guard.sites.items() if site.startswith("tolist at rl/runner.py"))
    assert copies <= 2
