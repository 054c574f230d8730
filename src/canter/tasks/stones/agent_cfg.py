"""PPO for dog-stones: the dog's velocity-tracking settings with a smaller initial action noise and
entropy bonus (the policy acts on top of the heuristic controller, which already walks)."""

from __future__ import annotations

from canter.rl.runner import RunnerCfg
from canter.tasks.dog.agent_cfg import dog_agent_cfg


def dog_stones_agent_cfg() -> RunnerCfg:
    cfg = dog_agent_cfg()
    cfg.policy.init_noise_std = 0.3
    cfg.algo.entropy_coef = 0.005
    return cfg
