"""Experiment driver: registers hand-cube-axis-rel (relative finger targets) and runs the canter CLI."""
import os
import sys

from canter.core.registry import TaskSpec
from canter.tasks import REGISTRY
from canter.tasks.hand.env_cfg import hand_cube_axis_env_cfg, with_relative_actions

scale = float(os.environ.get("REL_SCALE", "0.1"))
base = REGISTRY.get("hand-cube-axis")
REGISTRY._tasks["hand-cube-axis-rel"] = TaskSpec(
    name="hand-cube-axis-rel", description="experiment", env_cfg=lambda: with_relative_actions(hand_cube_axis_env_cfg(), scale),
    agent_cfg=base.agent_cfg, metrics=base.metrics, episode_metrics=base.episode_metrics)
from canter.cli.main import entrypoint  # noqa: E402

sys.exit(entrypoint())
