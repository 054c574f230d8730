"""Success rate of arm-grasp-state's scripted expert: every env runs one episode from a random reset.

    python scripts/grasp_expert.py --num-envs 256 --seed 0 [--backend cpu|warp]

Prints one JSON line: task, backend, episodes, seed, success_rate, mean_seconds_to_success, wall_s.
"""

from __future__ import annotations

import argparse
import json
import time

from canter.envs.manager_env import ManagerBasedRLEnv
from canter.tasks import REGISTRY
from canter.tasks.grasp.expert import expert_success_rate


def main() -> None:
    parser = argparse.ArgumentParser(description="Success rate of the arm-grasp-state expert.")
    parser.add_argument("--num-envs", type=int, default=256)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--backend", choices=("cpu", "warp"), default="cpu")
    parser.add_argument("--threads", type=int, default=0)
    args = parser.parse_args()
    spec = REGISTRY.get("arm-grasp-state")
    cfg = spec.env_cfg()
    cfg.num_envs, cfg.seed, cfg.sim.backend, cfg.sim.num_threads = args.num_envs, args.seed, args.backend, args.threads
    env = ManagerBasedRLEnv(cfg)
    assert spec.expert is not None
    start = time.perf_counter()
    rate, seconds = expert_success_rate(env, spec.expert(env))
    print(json.dumps({
        "task": spec.name, "backend": args.backend, "episodes": args.num_envs, "seed": args.seed,
        "success_rate": rate, "mean_seconds_to_success": round(seconds, 3),
        "wall_s": round(time.perf_counter() - start, 1),
    }))


if __name__ == "__main__":
    main()
