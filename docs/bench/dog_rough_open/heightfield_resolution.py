"""BENCHMARKS "Left alone": what a 0.05 m heightfield would cost dog-rough, env steps per second of the task with
1,024 envs and uniform random actions at the shipped 0.1 m and at 0.05 m (run each twice, alternating:
python heightfield_resolution.py 0.1; python heightfield_resolution.py 0.05; ...). Prints the median of 5 x 60 steps."""
import resource
import sys

import torch

from canter.bench.env import time_loop
from canter.core.device import torch_threads
from canter.envs.manager_env import ManagerBasedRLEnv
from canter.tasks import REGISTRY

h = float(sys.argv[1])
cfg = REGISTRY.get_mujoco("dog-rough", "heightfield_resolution").env_cfg()
assert cfg.terrain is not None
cfg.terrain.horizontal_scale = h
cfg.num_envs = 1024
with torch_threads(1):
    env = ManagerBasedRLEnv(cfg)
    env.reset()
    generator = torch.Generator().manual_seed(0)

    def step() -> None:
        env.step(torch.rand(cfg.num_envs, env.num_actions, generator=generator) * 2 - 1)

    time_loop(step, 30)  # warm-up
    fps = [cfg.num_envs * 60 / time_loop(step, 60) for _ in range(5)]
fps.sort()
print(f"h={h}: env steps/s median {fps[2]:.0f} (all {[round(f) for f in fps]}), max RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6:.2f} GB")
