"""Tensor operations per env step, by the Canter function that issues them: on a GPU each is (about)
one kernel launch, so their count is what a launch-bound env step costs there.

Usage: python scripts/env_op_count.py TASK [--backend warp|cpu] [--num-envs N] [--steps K] [--top T]

Counts the aten operations (torch's dispatcher, below Python) of K env steps of random actions after
three warm-up steps, and attributes each to the innermost canter frame outside the env's own step
function. Runs on any device (the count does not depend on it); with --backend warp on a CPU-only
machine, on Warp's CPU device.
"""

from __future__ import annotations

import collections
import traceback

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from canter.runs.parsing import ScriptParser


class _Count(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.ops: collections.Counter[str] = collections.Counter()
        self.sites: collections.Counter[str] = collections.Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops[str(func)] += 1
        site = "(the env's step)"
        for frame in reversed(traceback.extract_stack(limit=30)[:-1]):
            if "/canter/" in frame.filename and not frame.filename.endswith("envs/manager_env.py"):
                site = f"{frame.filename.split('/canter/')[-1]}:{frame.name}"
                break
        self.sites[site] += 1
        return func(*args, **(kwargs or {}))


def main() -> None:
    parser = ScriptParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("task")
    parser.add_argument("--backend", default="warp", choices=("warp", "cpu"))
    parser.add_argument("--num-envs", type=int, default=16)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args()
    from canter.envs.manager_env import ManagerBasedRLEnv
    from canter.tasks import REGISTRY

    cfg = REGISTRY.get_mujoco(args.task, "env_op_count").env_cfg()
    cfg.num_envs = args.num_envs
    cfg.device = "cuda" if torch.cuda.is_available() and args.backend == "warp" else "cpu"
    cfg.sim.backend = args.backend  # type: ignore[assignment]
    env = ManagerBasedRLEnv(cfg)
    env.reset()
    actions = torch.zeros(env.num_envs, env.num_actions, device=env.device)
    for _ in range(3):
        env.step(actions)
    with _Count() as count:
        for _ in range(args.steps):
            env.step(torch.rand_like(actions) * 2 - 1)
    total = sum(count.ops.values()) / args.steps
    print(f"{args.task} ({args.backend} backend, {args.num_envs} envs): {total:.0f} tensor operations per env step")
    for site, n in count.sites.most_common(args.top):
        print(f"{n / args.steps:8.1f}  {site}")


if __name__ == "__main__":
    main()
