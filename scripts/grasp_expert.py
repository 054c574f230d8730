"""Success rate of arm-grasp-state's scripted expert: every env runs one episode from a random reset.

    python scripts/grasp_expert.py --num-envs 256 --seed 0 [--backend cpu|warp] [--perturb P] [--random-start K]

How well the expert recovers from states its own trajectories never visit (what DAgger asks of it,
with a student at the wheel): --perturb P: at every step each env moves, with probability P, by a
uniformly random tcp and yaw action instead of the expert's (the gripper command stays the
expert's); --random-start K: the first K steps of every episode are uniformly random actions,
gripper included, then the expert drives.
Prints one JSON line: task, backend, episodes, seed, perturb, random_start, success_rate,
mean_seconds_to_success, wall_s.
"""

from __future__ import annotations

import json
import time

import torch

from canter.envs.manager_env import ManagerBasedRLEnv
from canter.runs.parsing import ScriptParser
from canter.tasks import REGISTRY
from canter.tasks.grasp.expert import expert_success_rate


def main() -> None:
    parser = ScriptParser(description="Success rate of the arm-grasp-state expert.")
    parser.add_argument("--num-envs", type=int, default=256)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--backend", choices=("cpu", "warp"), default="cpu")
    parser.add_argument("--threads", type=int, default=0)
    parser.add_argument("--perturb", type=float, default=0.0)
    parser.add_argument("--random-start", type=int, default=0)
    args = parser.parse_args()
    spec = REGISTRY.get("arm-grasp-state")
    cfg = spec.env_cfg()
    cfg.num_envs, cfg.seed, cfg.sim.backend, cfg.sim.num_threads = args.num_envs, args.seed, args.backend, args.threads
    env = ManagerBasedRLEnv(cfg)
    assert spec.expert is not None
    expert = spec.expert(env)
    generator = torch.Generator().manual_seed(args.seed)

    def drive(env: ManagerBasedRLEnv) -> torch.Tensor:
        action = expert(env)  # called at every step, as DAgger's labeller is
        random = torch.rand(action.shape, generator=generator) * 2 - 1
        swap = torch.rand(action.shape[0], 1, generator=generator) < args.perturb
        moved = torch.cat((torch.where(swap, random[:, :4], action[:, :4]), action[:, 4:]), dim=1)
        early = (env.episode_length_buf < args.random_start).unsqueeze(1)
        return torch.where(early, random, moved)

    start = time.perf_counter()
    rate, seconds = expert_success_rate(env, drive)
    print(json.dumps({
        "task": spec.name, "backend": args.backend, "episodes": args.num_envs, "seed": args.seed,
        "perturb": args.perturb, "random_start": args.random_start, "success_rate": rate, "mean_seconds_to_success": round(seconds, 3),
        "wall_s": round(time.perf_counter() - start, 1),
    }))


if __name__ == "__main__":
    main()
