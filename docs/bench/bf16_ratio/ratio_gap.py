"""How far the update's bfloat16 forward pass puts PPO's ratio and KL from the float32 rollout's,
before any gradient step (BENCHMARKS.md §21).

    python docs/bench/bf16_ratio/ratio_gap.py RUN_DIR CHECKPOINT

Loads a trained run, collects four rollouts with its float32 policy (as `canter train` does) and
compares, on the last, the stored log-probabilities, action distributions and values with the ones
the update's forward pass computes under bfloat16 autocast (hidden layers in bfloat16, output layers
in float32, as `--agent.algo.autocast bf16`).
"""

import sys

import torch

from canter.runs.load import load_run

run_dir, checkpoint = sys.argv[1], sys.argv[2]
_, _, runner = load_run(run_dir, checkpoint=checkpoint)
algorithm, env = runner.algorithm, runner.env
obs = env.reset()[0]
with torch.no_grad():
    for _ in range(4):
        algorithm.storage.clear()
        for _ in range(algorithm.cfg.num_steps_per_env):
            actions = algorithm.act(obs)
            obs, rewards, terminated, truncated, extras = env.step(actions)
            algorithm.process_env_step(rewards, terminated, truncated, extras)
storage = algorithm.storage
observations = {group: buffer.flatten(0, 1) for group, buffer in storage.observations.items()}
actions, old_log_prob = storage.actions.flatten(0, 1), storage.log_probs.flatten(0, 1).flatten()
old_mean, old_std, old_values = (storage.action_mean.flatten(0, 1), storage.action_std.flatten(0, 1),
                                 storage.values.flatten(0, 1).flatten())
with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
    mean, std = algorithm.policy.action_distribution(observations)
    values = algorithm.policy.evaluate(observations, advance_memory=False)
with torch.no_grad():
    mean, std, values = mean.float(), std.float(), values.float().flatten()
    gap = algorithm.policy.log_prob(actions, mean, std).flatten() - old_log_prob
    off = gap.exp().sub(1).abs()
    kl = algorithm.policy.kl(old_mean, old_std, mean, std).mean()
print(f"{len(gap)} samples: |log-prob gap| mean {gap.abs().mean():.5f}, max {gap.abs().max():.4f}; "
      f"ratio off 1 by > 0.02: {(off > 0.02).float().mean():.2%}, > clip {algorithm.cfg.clip_param}: "
      f"{(off > algorithm.cfg.clip_param).float().mean():.2%}; KL(rollout || bf16) {kl:.2e} "
      f"(desired_kl {algorithm.cfg.desired_kl}); |value gap| mean {(values - old_values).abs().mean():.5f} "
      f"(|V| mean {old_values.abs().mean():.3f})")
