"""The configuration of a manager-based RL environment."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from canter.core.validate import Validated, require_at_least, require_positive
from canter.managers.action import ActionTermCfg
from canter.managers.command import CommandTermCfg
from canter.managers.curriculum import CurriculumTermCfg
from canter.managers.event import EventTermCfg
from canter.managers.observation import ObsGroupCfg
from canter.managers.reward import RewardTermCfg
from canter.managers.symmetry import SymmetryCfg
from canter.managers.termination import TerminationTermCfg
from canter.sim.config import SimCfg
from canter.sim.model import SpecEdit
from canter.terrains.config import TerrainCfg


@dataclass(kw_only=True)
class EnvCfg(Validated):
    """A task: the model, the physics, and the terms of every manager.

    model_path: MJCF file; spec_edits run on its MjSpec before compiling (e.g. add sensors).
    default_keyframe: the keyframe resets start from and joint offsets are measured against.
    decimation: physics steps per env (control) step; step_dt = decimation * timestep.
    episode_length_s: seconds before a time-out.
    only_positive_rewards: clip each step's summed reward at zero (legged_gym's option): with many
        penalty terms, a young policy whose penalties outweigh its positive terms otherwise learns
        to end its episodes early; the per-term episode sums still log the unclipped terms.
    clip_actions: bound of the policy's raw actions, ±clip_actions (legged_gym's clip_actions): what
        the actuators receive and what rewards and observations see (the action-rate penalty of a
        policy fed a runaway env's observations stays bounded). None: unbounded.
    cuda_graph: run each env step as one replayed CUDA graph (actions, physics, terms, resets,
        observations: canter.envs.cuda_graph), captured after a few eager steps. Needs the warp
        backend on a CUDA device; results are those of the eager step (tests/gpu).
    """

    model_path: str
    spec_edits: tuple[SpecEdit, ...] = ()
    default_keyframe: str | None = None  # a keyframe whose qpos becomes the default pose (qpos0)
    num_envs: int = 1024
    device: str = "cpu"
    seed: int = 0
    decimation: int = 2
    episode_length_s: float = 10.0
    sim: SimCfg = field(default_factory=SimCfg)
    actions: dict[str, ActionTermCfg] = field(default_factory=dict)
    observations: dict[str, ObsGroupCfg] = field(default_factory=dict)
    rewards: dict[str, RewardTermCfg] = field(default_factory=dict)
    only_positive_rewards: bool = False
    clip_actions: float | None = None
    terminations: dict[str, TerminationTermCfg] = field(default_factory=dict)
    events: dict[str, EventTermCfg] = field(default_factory=dict)
    commands: dict[str, CommandTermCfg] = field(default_factory=dict)
    curriculum: dict[str, CurriculumTermCfg] = field(default_factory=dict)
    terrain: TerrainCfg | None = None  # None: the model's own floor, no terrain object
    symmetry: SymmetryCfg | None = None  # the robot's left-right mirror (with ObsTermCfg.mirror), for the learner
    cuda_graph: bool = False  # the env step as one CUDA graph (warp backend on CUDA only)

    config_name = "env"

    def evaluation(self) -> EnvCfg:
        """A copy to score a policy with: every command's `evaluation()` config (training-only aids
        off: the hand's goal curriculum gives way to the full goal set), without the curriculum terms
        marked `training_only` (a randomization curriculum: the full ranges). Everything else is kept."""
        return dataclasses.replace(
            self,
            commands={name: term.evaluation() for name, term in self.commands.items()},
            curriculum={name: term for name, term in self.curriculum.items()
                        if not getattr(term.func, "training_only", False)},
        )

    def validate(self) -> None:
        """This config's own fields; `canter.core.validate.validate_tree(cfg)` checks the nested
        configs (sim, terms, terrain) too, as the env does when it is built."""
        require_at_least(self, "num_envs", 1, integer=True)
        require_at_least(self, "seed", 0, integer=True)
        require_at_least(self, "decimation", 1, integer=True)
        require_positive(self, "episode_length_s")
        if self.clip_actions is not None:
            require_positive(self, "clip_actions")
