"""GA3C on `ant` with a line of JSON per balancing period: the training return and episode length,
the policy's mean |μ| and largest |μ| on the first agent's current observations, its mean value,
the first agent's reward terms this step (weighted, per env), and the trainers' losses.

    python docs/bench/ga3c_bounds/diagnose.py SECONDS [canter train flags, e.g. --agent.algo.bounds-loss-coef 0]

DROP_TERMS=actions (comma-separated) removes those terms from the policy's observations first.
BENCHMARKS.md §16 used it to find why GA3C's ant collapsed."""

import json
import os
import sys

import torch

from canter.runs.args import parse_train_args
from canter.runs.ga3c import build_ga3c


def main() -> None:
    seconds = float(sys.argv[1])
    args = parse_train_args("ant", ["--algo", "ga3c", "--quiet", *sys.argv[2:]])
    for term in filter(None, os.environ.get("DROP_TERMS", "").split(",")):
        args.env.observations["policy"].terms.pop(term)
    holder = {}

    def on_period(stats) -> None:
        runner = holder["runner"]
        env = runner.envs[0]
        while not hasattr(env, "reward_manager"):  # unwrap to the manager env
            env = env.env
        with torch.no_grad(), runner.lock:
            mean, std, values = runner.policy.forward_train(env.obs_buf)
            rewards = env.reward_manager.step_values.mean(dim=1).tolist()
        row = {"t": round(stats.wall_time_s, 1), "return": round(stats.mean_return, 1),
               "length": round(stats.mean_episode_length, 1), "updates": runner.version,
               "mean_abs_mu": round(mean.abs().mean().item(), 3), "max_abs_mu": round(mean.abs().max().item(), 2),
               "std": round(std.mean().item(), 3), "value": round(values.mean().item(), 2),
               "reward_terms": {n: round(v, 4) for n, v in zip(env.reward_manager.names, rewards, strict=True)},
               **{k: round(v, 4) for k, v in stats.losses.items()}}
        print(json.dumps(row), flush=True)

    holder["runner"] = build_ga3c(args, on_period=on_period)
    holder["runner"].learn(seconds)


if __name__ == "__main__":
    main()
