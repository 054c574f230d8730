"""Where the training loop synchronizes with the host on CUDA:
`python -m canter.bench.gpu_syncs TASK [NUM_ENVS]`.

Runs env steps and one PPO iteration (rollout + update) on the warp backend under
torch.cuda.set_sync_debug_mode("warn") and prints, as JSON, each synchronizing call site inside
Canter (file:line of the innermost canter frame) with its count."""

from __future__ import annotations

import collections
import json
import sys
import tempfile
import warnings
from pathlib import Path

import torch

from canter.core.syncguard import call_site


def sync_sites(task: str, num_envs: int = 1024, steps: int = 50) -> dict[str, object]:
    from canter.rl.runner import OnPolicyRunner
    from canter.runs.args import make_env, parse_train_args

    args = parse_train_args(task, ["--backend", "warp", "--device", "cuda", "--num-envs", str(num_envs), "--quiet"])
    env = make_env(args)
    obs = env.reset()[0]
    sites: dict[str, collections.Counter] = {"env_step": collections.Counter(), "iteration": collections.Counter()}
    phase = ["env_step"]

    def record(message, category, filename, lineno, file=None, line=None):
        if "synchroniz" in str(message):
            sites[phase[0]][call_site(skip=("gpu_syncs",))] += 1

    actions = torch.zeros(env.num_envs, env.num_actions, device=env.device)
    for _ in range(3):
        env.step(actions)
    with tempfile.TemporaryDirectory() as tmp:
        runner = OnPolicyRunner(env, args.agent, Path(tmp), seed=0, cpu_physics=False)
        runner.algorithm.train_mode()
        obs = env.reset()[0]
        runner.run_iteration(obs, None)  # warm-up (graph capture, lazy buffers)
        torch.cuda.synchronize()
        torch.cuda.set_sync_debug_mode("warn")
        try:
            with warnings.catch_warnings():  # restores warnings.showwarning on the way out
                warnings.simplefilter("always")
                warnings.showwarning = record
                for _ in range(steps):
                    obs = env.step(torch.rand_like(actions) * 2 - 1)[0]
                phase[0] = "iteration"
                runner.run_iteration(obs, None)
        finally:
            torch.cuda.set_sync_debug_mode(0)
    return {"task": task, "num_envs": num_envs, "env_steps": steps,
            "env_step_syncs": dict(sites["env_step"].most_common()),
            "iteration_syncs": dict(sites["iteration"].most_common())}


if __name__ == "__main__":
    if not torch.cuda.is_available():
        print("gpu_syncs: no CUDA device", file=sys.stderr)
        sys.exit(2)
    print(json.dumps(sync_sites(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 1024), indent=2))
