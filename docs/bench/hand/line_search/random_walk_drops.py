"""Cubes dropped by random finger moves with a given number of line-search evaluations.

    python docs/bench/hand/line_search/random_walk_drops.py 10|50

1,024 hand-cube-axis envs hold still for 20 control steps, then act N(0, 0.3) relative finger moves
(clipped to [-1, 1]) for 150 steps (4.5 s); prints control steps/s and the episodes that ended in a drop.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import torch

from canter.envs.manager_env import ManagerBasedRLEnv
from canter.sim.model import asset_path
from canter.tasks import REGISTRY

evaluations = int(sys.argv[1])
text = Path(asset_path("hand_cube.xml")).read_text()
text = text.replace('ls_iterations="50"', f'ls_iterations="{evaluations}"')
with tempfile.TemporaryDirectory() as tmp:
    model = Path(tmp) / "hand_cube.xml"
    model.write_text(text)
    cfg = REGISTRY.get("hand-cube-axis").env_cfg()
    cfg.num_envs, cfg.model_path = 1024, str(model)
    env = ManagerBasedRLEnv(cfg)
env.reset()
generator = torch.Generator().manual_seed(0)
for _ in range(20):
    env.step(torch.zeros(env.num_envs, env.num_actions))
start, drops, steps = time.perf_counter(), 0, 150
for _ in range(steps):
    action = (0.3 * torch.randn(env.num_envs, env.num_actions, generator=generator)).clamp(-1, 1)
    _, _, terminated, _, _ = env.step(action)
    drops += int(terminated.sum())
seconds = time.perf_counter() - start
print(f"ls_iterations {evaluations}: {steps * env.num_envs / seconds:,.0f} control steps/s, {drops} drops")
