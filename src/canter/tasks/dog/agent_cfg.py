"""PPO for the dog's velocity tracking (rsl_rl-style settings, networks sized for a CPU)."""

from __future__ import annotations

from canter.rl.runner import RunnerCfg
from canter.tasks.legged import legged_agent_cfg


def dog_agent_cfg() -> RunnerCfg:
    return legged_agent_cfg()
