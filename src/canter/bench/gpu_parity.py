"""cpu <-> cuda parity of the warp backend for one task: `python -m canter.bench.gpu_parity TASK`.

The task's env is built twice with the warp backend, on Warp's CPU device and on CUDA, with the same
config and seed (so the same terrain and per-env model values). The CPU env runs a few steps of
random actions to reach varied states (robots in contact, falling, reset); its whole simulation state
and per-env model fields are copied into the CUDA env's simulator; then both simulators step the same
controls for `steps` control steps (decimation substeps each) and the largest absolute differences of
qpos and qvel are reported, with the tolerance they are judged by:

    |qpos_cuda - qpos_cpu| <= 1e-4 + 1e-4 |qpos_cpu|   and   |qvel_cuda - qvel_cpu| <= 1e-2 + 1e-3 |qvel_cpu|

after one control step (both sides compute in float32; MuJoCo Warp's CUDA kernels gather contacts
with atomics, so their order and the solver's float32 rounding differ from the CPU device's, and
contact-rich states amplify that over longer horizons, which is why the horizon is one control step:
the same bar as tests/sim/test_warp.py's cpu-vs-warp parity).

Where contacts sit at their margins (height fields, a grasped object squeezed by two fingers) one
control step amplifies float32 rounding far past that bar: on Warp's CPU device alone, moving qpos by
one float32 rounding (6e-8 relative) from the same state moves humanoid-stairs' qvel by ~5 m/s after one
control step (BENCHMARKS.md §13d). So the CPU device also steps ROUNDING_RUNS copies of the state with
qpos perturbed by one rounding, and the largest difference among them, the state's *rounding spread*,
is the second bar: `within` holds when each of qpos and qvel is under the tolerance above or within
ROUNDING_FACTOR times its rounding spread (`within_tolerance` and `within_rounding` are reported too).
A CUDA kernel that computed something else would miss both on the plane-contact tasks, whose spread is
at the rounding level.

With `deterministic`, both simulators run with MuJoCo Warp's `opt.deterministic` bits all set
(contacts sorted, constraint rows ordered, atomics reduced in a fixed order), which takes the order
of contacts out of the comparison: what remains is float32 rounding of the two devices.
"""


from __future__ import annotations

import json
import sys
from typing import Any

import torch

QPOS_TOL = (1e-4, 1e-4)  # (atol, rtol)
QVEL_TOL = (1e-2, 1e-3)
ROUNDING = 6e-8  # float32's unit roundoff (2^-24 = 6.0e-8): the size of the qpos perturbations
ROUNDING_RUNS = 4  # perturbed CPU-device runs that measure the state's rounding spread
ROUNDING_FACTOR = 3.0  # CUDA may differ from the CPU device by this multiple of that spread


def _deterministic(sim: Any) -> None:
    from mujoco_warp._src.types import DeterminismType

    bits = 0
    for flag in DeterminismType:
        bits |= int(flag)
    sim.mjw_model.opt.deterministic = bits
    sim._graphs.clear()  # captured work baked in the previous choice
    sim.graph_epoch += 1


def warp_parity(task: str, num_envs: int = 64, warmup: int = 20, steps: int = 1, seed: int = 0,
                device: str = "cuda", deterministic: bool = False) -> dict[str, Any]:
    from canter.envs.manager_env import ManagerBasedRLEnv
    from canter.tasks import REGISTRY

    spec = REGISTRY.get_mujoco(task, "gpu parity")

    def build(dev: str) -> ManagerBasedRLEnv:
        cfg = spec.env_cfg()
        cfg.num_envs = num_envs
        cfg.seed = seed
        cfg.device = dev
        cfg.sim.backend = "warp"  # type: ignore[assignment]
        return ManagerBasedRLEnv(cfg)

    cpu_env = build("cpu")
    if deterministic:
        _deterministic(cpu_env.sim)
    cpu_env.reset()
    generator = torch.Generator().manual_seed(seed)
    for _ in range(warmup):
        cpu_env.step(torch.rand(num_envs, cpu_env.num_actions, generator=generator) * 2 - 1)
    gpu_env = build(device)
    if deterministic:
        _deterministic(gpu_env.sim)
    gpu_env.reset()
    state = cpu_env.sim.get_state()
    gpu_env.sim.set_state({k: v.to(gpu_env.device) for k, v in state.items()})
    cpu_sim, gpu_sim = cpu_env.sim, gpu_env.sim
    low, high = (torch.as_tensor(cpu_sim.model.actuator_ctrlrange[:, i], dtype=torch.float32) for i in (0, 1))
    controls = [low + (high - low) * torch.rand(num_envs, low.numel(), generator=generator) for _ in range(steps)]
    decimation = cpu_env.cfg.decimation

    def cpu_run(perturbation: torch.Generator | None) -> dict[str, torch.Tensor]:
        """The CPU device's qpos/qvel after the compared steps from `state`; with a generator, from
        `state` with qpos moved by float32 rounding (±ROUNDING relative, at least absolute)."""
        cpu_sim.set_state(state)
        if perturbation is not None:
            q = cpu_sim.qpos
            q.add_(q.abs().clamp(min=1.0) * ROUNDING * (torch.rand(q.shape, generator=perturbation) * 2 - 1))
            cpu_sim.forward()
        cpu_sim.overflow.zero_()
        for ctrl in controls:
            cpu_sim.ctrl.copy_(ctrl)
            cpu_sim.step(decimation)
        return {"qpos": cpu_sim.qpos.double().clone(), "qvel": cpu_sim.qvel.double().clone()}

    # the CPU device against itself from states one float32 rounding apart: how far any float32
    # implementation may land from it at this state (contacts at their margins amplify rounding)
    sensitivity = {"qpos": 0.0, "qvel": 0.0}
    for k in range(ROUNDING_RUNS):
        other = cpu_run(torch.Generator().manual_seed(seed + 1000 + k))
        reference = cpu_run(None)
        for name in sensitivity:
            sensitivity[name] = max(sensitivity[name], _max_abs(other[name] - reference[name]))
    reference = cpu_run(None)
    overflow_cpu = _overflow_counts(cpu_sim)
    gpu_sim.overflow.zero_()
    for ctrl in controls:
        gpu_sim.ctrl.copy_(ctrl.to(gpu_env.device))
        gpu_sim.step(decimation)
    errors: dict[str, float] = {}
    ratios: dict[str, float] = {}
    for name, (atol, rtol) in (("qpos", QPOS_TOL), ("qvel", QVEL_TOL)):
        ref = reference[name]
        err = (getattr(gpu_sim, name).double().cpu() - ref).abs()
        errors[name] = _max_abs(err)
        ratios[name] = float((err / (atol + rtol * ref.abs())).max()) if err.numel() else 0.0
    within_tolerance = ratios["qpos"] <= 1.0 and ratios["qvel"] <= 1.0
    # per field: under the fixed tolerance, or within ROUNDING_FACTOR x the CPU device's own rounding spread
    within_rounding = all(ratios[name] <= 1.0 or errors[name] <= ROUNDING_FACTOR * sensitivity[name] for name in errors)
    contacts = int(gpu_sim.mjw_data.nacon.numpy()[0]) if hasattr(gpu_sim, "mjw_data") else None
    return {
        "task": task, "num_envs": num_envs, "steps": steps, "deterministic": deterministic,
        "decimation": decimation, "warmup_steps": warmup,
        "qpos_max_abs": errors["qpos"], "qvel_max_abs": errors["qvel"],
        "qpos_worst_over_tolerance": ratios["qpos"], "qvel_worst_over_tolerance": ratios["qvel"],
        "tolerance": f"qpos {QPOS_TOL[0]:g} + {QPOS_TOL[1]:g}|q|, qvel {QVEL_TOL[0]:g} + {QVEL_TOL[1]:g}|v|",
        "qpos_rounding_spread": sensitivity["qpos"], "qvel_rounding_spread": sensitivity["qvel"],
        "within_tolerance": within_tolerance, "within_rounding": within_rounding,
        "within": within_tolerance or within_rounding, "contacts_cuda": contacts,
        "nonfinite_cpu": int(cpu_sim.nonfinite_total), "nonfinite_cuda": int(gpu_sim.nonfinite_total),
        "overflow_cpu": overflow_cpu, "overflow_cuda": _overflow_counts(gpu_sim),
    }


def _max_abs(diff: torch.Tensor) -> float:
    return float(diff.abs().max()) if diff.numel() else 0.0


def _overflow_counts(sim: Any) -> dict[str, int]:
    """Envs per mjw.OverflowType bit set during the compared steps (contacts or constraint rows
    dropped, or the solver stopped at its iteration limit: either makes two devices disagree)."""
    import mujoco_warp as mjw

    bits = sim.overflow.cpu()
    counts = {str(flag.name): int(((bits & int(flag)) != 0).sum()) for flag in mjw.OverflowType
              if flag != mjw.OverflowType.ALL}
    return {name: count for name, count in counts.items() if count}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    deterministic = "--deterministic" in argv
    argv = [a for a in argv if a != "--deterministic"]
    if len(argv) != 1:
        print("usage: python -m canter.bench.gpu_parity TASK [--deterministic]", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("gpu_parity: no CUDA device", file=sys.stderr)
        return 2
    print(json.dumps(warp_parity(argv[0], deterministic=deterministic), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
