"""GPU tests (pytest marker `gpu`; every test skips cleanly without CUDA): cpu <-> cuda parity of
the warp backend for each task family, and no host synchronization in the env step and the PPO
rollout/update on CUDA (torch.cuda.set_sync_debug_mode("error")). scripts/gpu_check.sh runs them."""

from __future__ import annotations

import json

import pytest
import torch

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device"),
]

FAMILIES = (
    "cartpole", "ant", "dog-flat", "dog-rough", "arm-grasp-state", "arm-grasp", "humanoid-flat", "humanoid-stairs", "hand-cube",
)


@pytest.mark.parametrize("task", FAMILIES)
def test_warp_backend_cpu_device_and_cuda_agree(task):
    pytest.importorskip("mujoco_warp")
    from canter.bench.gpu_parity import warp_parity

    result = warp_parity(task, num_envs=32, warmup=10, steps=1)
    print(f"parity {task}: {json.dumps(result)}")  # the figures, in the check's log (pytest -rA)
    assert result["nonfinite_cuda"] == 0
    assert result["within"], result


def _cuda_env(task: str, num_envs: int = 256):
    from canter.envs.manager_env import ManagerBasedRLEnv
    from canter.tasks import REGISTRY

    cfg = REGISTRY.get(task).env_cfg()
    cfg.num_envs = num_envs
    cfg.device = "cuda"
    cfg.sim.backend = "warp"  # type: ignore[assignment]
    return ManagerBasedRLEnv(cfg)


@pytest.mark.parametrize("task", ("cartpole", "ant", "dog-flat", "dog-rough"))
def test_env_step_never_synchronizes_with_the_host(task):
    pytest.importorskip("mujoco_warp")
    env = _cuda_env(task)
    env.reset()
    actions = torch.zeros(env.num_envs, env.num_actions, device=env.device)
    for _ in range(3):  # graph capture and lazy buffers happen on the first steps
        env.step(actions)
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        for _ in range(int(env.max_episode_length) + 5):  # through time-outs and their resets
            env.step(torch.rand_like(actions) * 2 - 1)
    finally:
        torch.cuda.set_sync_debug_mode(0)
    torch.cuda.synchronize()
