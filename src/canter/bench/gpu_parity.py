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
    qpos_err = qvel_err = 0.0
    qpos_ratio = qvel_ratio = 0.0
    decimation = cpu_env.cfg.decimation
    for _ in range(steps):
        ctrl = low + (high - low) * torch.rand(num_envs, low.numel(), generator=generator)
        cpu_sim.ctrl.copy_(ctrl)
        gpu_sim.ctrl.copy_(ctrl.to(gpu_env.device))
        cpu_sim.step(decimation)
        gpu_sim.step(decimation)
    for name, (atol, rtol) in (("qpos", QPOS_TOL), ("qvel", QVEL_TOL)):
        ref = getattr(cpu_sim, name).double()
        got = getattr(gpu_sim, name).double().cpu()
        err = (got - ref).abs()
        ratio = float((err / (atol + rtol * ref.abs())).max()) if err.numel() else 0.0
        if name == "qpos":
            qpos_err, qpos_ratio = float(err.max()) if err.numel() else 0.0, ratio
        else:
            qvel_err, qvel_ratio = float(err.max()) if err.numel() else 0.0, ratio
    contacts = int(gpu_sim.mjw_data.nacon.numpy()[0]) if hasattr(gpu_sim, "mjw_data") else None
    return {
        "task": task, "num_envs": num_envs, "steps": steps, "deterministic": deterministic,
        "decimation": decimation, "warmup_steps": warmup,
        "qpos_max_abs": qpos_err, "qvel_max_abs": qvel_err,
        "qpos_worst_over_tolerance": qpos_ratio, "qvel_worst_over_tolerance": qvel_ratio,
        "tolerance": f"qpos {QPOS_TOL[0]:g} + {QPOS_TOL[1]:g}|q|, qvel {QVEL_TOL[0]:g} + {QVEL_TOL[1]:g}|v|",
        "within": qpos_ratio <= 1.0 and qvel_ratio <= 1.0, "contacts_cuda": contacts,
        "nonfinite_cpu": int(cpu_sim.nonfinite_total), "nonfinite_cuda": int(gpu_sim.nonfinite_total),
    }


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
