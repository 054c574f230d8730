"""The manager-based RL environment: the step loop that ties simulator, scene and managers together.

step(actions):
  actions -> action manager -> ctrl;  physics: `decimation` substeps in one batched call (or, with a
  controller action term, one call per controller tick, the controller run before each);
  NaN guard -> terminations (terminated / truncated) -> rewards (weight * term * dt) ->
  reset the envs that ended (curriculum, sim reset, reset events, manager buffers) ->
  commands -> interval events -> observations.
Everything stays in tensors on the env's device. Which envs reset, resample a command or get an interval
event is a selection (canter.core.selection): env indices on a backend that resets on the host (cpu),
a bool mask on one that resets on the device (warp), where the step never reads the device on the host.
"""

from __future__ import annotations

import math
from typing import Any

import torch
from rich.console import Console

from canter.core import selection
from canter.core.device import resolve_device
from canter.core.errors import ConfigError
from canter.core.mirror import Mirror
from canter.core.profiling import section
from canter.core.rng import make_generator
from canter.core.validate import validate_tree
from canter.envs.cuda_graph import GraphedStep
from canter.envs.env_cfg import EnvCfg
from canter.managers.action import ActionManager
from canter.managers.command import CommandManager
from canter.managers.curriculum import CurriculumManager
from canter.managers.event import EventManager
from canter.managers.observation import ObservationManager
from canter.managers.reward import RewardManager
from canter.managers.symmetry import action_mirror, group_mirrors
from canter.managers.termination import TerminationManager
from canter.mdp.randomization import randomization_summary
from canter.scene.scene import Scene
from canter.sim import mjwarnings
from canter.sim.backend import make_simulator
from canter.sim.model import keyframe_index, load_model
from canter.terrains.terrain import Terrain


class ManagerBasedRLEnv:
    """A batch of `num_envs` episodes of one task. Implements canter.envs.vec_env.VecEnv."""

    def __init__(self, cfg: EnvCfg, console: Console | None = None):
        validate_tree(cfg)
        self.cfg = cfg
        self.device = resolve_device(cfg.device)
        if cfg.cuda_graph and (self.device.type != "cuda" or cfg.sim.backend != "warp"):
            raise ConfigError(f"env.cuda_graph: a CUDA graph of the env step needs the warp backend on a CUDA "
                              f"device (this env: backend {cfg.sim.backend!r} on {self.device})")
        self.num_envs = cfg.num_envs
        self.generator = make_generator(cfg.seed, self.device)
        # the terrain exists before the model: its spec edit puts the ground into the model
        self.terrain: Terrain | None = None
        spec_edits = cfg.spec_edits
        if cfg.terrain is not None:
            self.terrain = Terrain(cfg.terrain, cfg.num_envs, self.device, self.generator)
            spec_edits = (*spec_edits, self.terrain.edit_spec)
        model = load_model(cfg.model_path, spec_edits, cfg.sim.timestep)
        self.sim = make_simulator(model, cfg.num_envs, cfg.sim, self.device)
        if cfg.default_keyframe is not None:
            self.sim.set_default_keyframe(keyframe_index(model, cfg.default_keyframe, cfg.model_path))
        self.scene = Scene(self.sim)
        self.physics_dt = self.sim.timestep
        self.step_dt = cfg.decimation * self.physics_dt
        self.set_episode_length(cfg.episode_length_s)
        self.episode_length_buf = torch.zeros(self.num_envs, dtype=torch.long, device=self.device)
        self.common_step_counter = 0
        self.episode_return = torch.zeros(self.num_envs, device=self.device)
        self.extras: dict[str, Any] = {"log": {}}
        # what randomization terms drew, per name: (num_envs, ...) rows (see mdp.randomization)
        self.randomization_state: dict[str, torch.Tensor] = {}
        # the () share of every randomization range drawn, set by a curriculum term that owns it
        # (e.g. the hand's RandomizationCurriculum); None: the full ranges (see mdp.randomization)
        self.randomization_strength: torch.Tensor | None = None

        # order matters: commands and actions exist before the terms that read them are built
        self.command_manager = CommandManager(cfg.commands, self, console)
        self.action_manager = ActionManager(cfg.actions, self, console)
        self.event_manager = EventManager(cfg.events, self, console)
        self.sim.reset()
        self.sim.forward()
        self.observation_manager = ObservationManager(cfg.observations, self, console)
        self.termination_manager = TerminationManager(cfg.terminations, self, console)
        self.reward_manager = RewardManager(cfg.rewards, self, console, only_positive=cfg.only_positive_rewards)
        self.curriculum_manager = CurriculumManager(cfg.curriculum, self, console)
        self.num_actions = self.action_manager.action_dim
        self.event_manager.apply_startup()
        # startup draws are logged once, in the extras of reset() and of the next step (the runner
        # reads the steps'), and again after load_state_dict
        self._startup_randomization = list(self.randomization_state)
        self._startup_log: dict[str, torch.Tensor] = dict(self.extras["log"])
        self._pending_log = dict(self._startup_log)
        self.obs_buf: dict[str, torch.Tensor] = {}
        self._no_catches = torch.zeros((), dtype=torch.int64, device=self.device)
        self._graphed = GraphedStep(self, self._step) if cfg.cuda_graph else None

    @property
    def selects_by_mask(self) -> bool:
        """Whether lifecycle calls get (num_envs,) bool masks (a backend that resets on the device) rather
        than env indices (see canter.core.selection)."""
        return self.sim.resets_on_device

    def select(self, mask: torch.Tensor) -> torch.Tensor:
        """The selection of the envs in the (num_envs,) bool `mask`, in the form this env's terms get:
        the mask itself on a device-resident backend, its indices (a host read) otherwise."""
        return mask if self.selects_by_mask else mask.nonzero().squeeze(1)

    # --- VecEnv -----------------------------------------------------------------------------
    @property
    def observation_shapes(self) -> dict[str, tuple[int, ...]]:
        """Per group: (dim,), or (C, H, W) for an image group."""
        return dict(self.observation_manager.group_shapes)

    @property
    def observation_dtypes(self) -> dict[str, torch.dtype]:
        """Per group: float32, or uint8 for an RGB image group."""
        return dict(self.observation_manager.group_dtypes)

    def symmetry(self) -> tuple[dict[str, Mirror], Mirror] | None:
        """The left-right mirror for the learner: (per observation group whose terms all declare a
        mirror, its Mirror; the actions' Mirror), or None when the task declares no symmetry."""
        if self.cfg.symmetry is None:
            return None
        return group_mirrors(self, self.cfg.symmetry), action_mirror(self, self.cfg.symmetry)

    def evaluation(self) -> None:
        """Score from here on: every command term draws as its `cfg.evaluation()` would (training-only
        aids off, e.g. the hand's goal curriculum gives way to the full goal set, and a randomization
        curriculum's ranges to the full ones), for `canter eval` and `play`; `EnvCfg.evaluation()` is
        the same for an env not yet built."""
        for term in self.command_manager.terms.values():
            term.evaluation()
        self.curriculum_manager.evaluation()

    def reset(self) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
        """Reset every env and return the first observations."""
        all_ids = torch.arange(self.num_envs, device=self.device)
        self.extras = {"log": dict(self._startup_log)}
        self._reset_idx(all_ids)
        self.obs_buf = self.observation_manager.compute()
        return self.obs_buf, self.extras

    def get_observations(self) -> dict[str, torch.Tensor]:
        return self.obs_buf

    def step(
        self, actions: torch.Tensor
    ) -> tuple[dict[str, torch.Tensor], torch.Tensor, torch.Tensor, torch.Tensor, dict[str, Any]]:
        if self._graphed is not None:
            return self._graphed(actions)
        return self._step(actions)

    def set_episode_length(self, seconds: float) -> None:
        """Episodes end (time out) after `seconds` of env time, whole control steps rounded up."""
        self.max_episode_length_s = seconds
        self.max_episode_length = math.ceil(seconds / self.step_dt)

    @property
    def cuda_graph(self) -> GraphedStep | None:
        """The CUDA graph of the step (`cfg.cuda_graph`), or None."""
        return self._graphed

    def _step(
        self, actions: torch.Tensor
    ) -> tuple[dict[str, torch.Tensor], torch.Tensor, torch.Tensor, torch.Tensor, dict[str, Any]]:
        # derived values cached in the last step describe the same state, but a captured step must
        # compute them from the simulator's arrays, not read a previous step's tensors
        self.scene.invalidate()
        with section("physics"):
            self.action_manager.process_action(actions.to(self.device))
            caught = self._step_physics()
        with section("reward_observation"):
            self.episode_length_buf += 1
            self.common_step_counter += 1

            with section("terminations_rewards"):
                terminated, truncated = self.termination_manager.compute()
                reward = self.reward_manager.compute(self.step_dt)  # non-finite term values count as 0
            if caught is not None:
                # an env the NaN guard caught ends as terminal (no bootstrap) and earns nothing
                nonfinite = caught
                terminated = terminated | nonfinite
                truncated = truncated & ~terminated
                reward = reward.masked_fill(nonfinite, 0.0)
            else:  # fresh tensors for the caller: the manager reuses its buffers
                terminated, truncated, reward = terminated.clone(), truncated.clone(), reward.clone()
            self.episode_return += reward

            done = terminated | truncated
            self.extras = {"log": self._pending_log}
            self._pending_log = {}
            self.extras["episode_return"] = self.episode_return.clone()
            self.extras["episode_length"] = self.episode_length_buf.float()
            self.extras["nonfinite_resets"] = self._no_catches if caught is None else caught.sum()
            with section("resets"):
                resets = self.select(done)
                if self.selects_by_mask or resets.numel() > 0:
                    self._reset_idx(resets)
            with section("commands_events"):
                self.command_manager.compute(self.step_dt)
                self.event_manager.apply_interval(self.step_dt)
            with section("observations"):
                self.obs_buf = self.observation_manager.compute()
            self.extras["log"]["Sim/nonfinite_resets_total"] = self.sim.nonfinite_total
        return self.obs_buf, reward, terminated, truncated, self.extras

    def _step_physics(self) -> torch.Tensor | None:
        """`decimation` physics steps, with the action terms applied at the controller rate (once,
        unless a controller term asks for more). Returns the (num_envs,) bool envs the NaN guard
        caught in any of the calls, or None if it caught none."""
        substeps = self.action_manager.physics_steps_per_tick
        ticks = self.cfg.decimation // substeps
        if ticks == 1:
            self.action_manager.apply_action()
            self.sim.step(substeps)
            self.scene.invalidate()
            # a backend that knows on the host (cpu) says False when nothing was caught; one that keeps
            # the answer on the device (warp) says None, and its mask is used as it is (no host read)
            return None if self.sim.any_nonfinite is False else self.sim.nonfinite
        caught = torch.zeros(self.num_envs, dtype=torch.bool, device=self.device)
        on_host = True
        for _ in range(ticks):
            self.action_manager.apply_action()
            self.sim.step(substeps)
            self.scene.invalidate()
            caught |= self.sim.nonfinite  # each call reports only its own catches
            on_host = on_host and self.sim.any_nonfinite is not None
        return None if on_host and not bool(caught.any()) else caught

    def _reset_idx(self, env_ids: torch.Tensor) -> None:
        """Start new episodes for the selection `env_ids` (indices or a mask)."""
        log = self.extras["log"]
        log.update(self.curriculum_manager.reset(env_ids))
        self.sim.reset(env_ids)
        self.event_manager.reset(env_ids)
        self.sim.forward(env_ids)
        self.scene.invalidate()
        log.update(self.reward_manager.reset(env_ids))
        log.update(self.termination_manager.reset(env_ids))
        self.action_manager.reset(env_ids)
        self.observation_manager.reset(env_ids)
        self.command_manager.reset(env_ids)
        selection.fill(self.episode_length_buf, env_ids, 0)
        selection.fill(self.episode_return, env_ids, 0.0)

    # --- checkpointing ----------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        state: dict[str, Any] = {
            "sim": self.sim.get_state(),
            "generator": self.generator.get_state(),
            "episode_length_buf": self.episode_length_buf.clone(),
            "episode_return": self.episode_return.clone(),
            "common_step_counter": self.common_step_counter,
            "obs_buf": {k: v.clone() for k, v in self.obs_buf.items()},
            "action": self.action_manager.state_dict(),
            "observation": self.observation_manager.state_dict(),
            "reward": self.reward_manager.state_dict(),
            "termination": self.termination_manager.state_dict(),
            "command": self.command_manager.state_dict(),
            "event": self.event_manager.state_dict(),
            "curriculum": self.curriculum_manager.state_dict(),
            "randomization": {k: v.clone() for k, v in self.randomization_state.items()},
        }
        if self.terrain is not None:
            state["terrain"] = self.terrain.state_dict()
        return state

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.sim.set_state(state["sim"])
        self.generator.set_state(state["generator"].cpu())  # a map_location may have moved it
        self.episode_length_buf.copy_(state["episode_length_buf"])
        self.episode_return.copy_(state["episode_return"])
        self.common_step_counter = int(state["common_step_counter"])
        self.obs_buf = {k: v.clone().to(self.device) for k, v in state["obs_buf"].items()}
        self.action_manager.load_state_dict(state["action"])
        self.observation_manager.load_state_dict(state["observation"])
        self.reward_manager.load_state_dict(state["reward"])
        self.termination_manager.load_state_dict(state["termination"])
        self.command_manager.load_state_dict(state["command"])
        self.event_manager.load_state_dict(state["event"])
        self.curriculum_manager.load_state_dict(state["curriculum"])
        if self.terrain is not None:
            self.terrain.load_state_dict(state["terrain"])
        self.randomization_state = {k: v.clone().to(self.device) for k, v in state["randomization"].items()}
        self._startup_log = {}
        for name in self._startup_randomization:
            if name in self.randomization_state:
                self._startup_log.update(randomization_summary(name, self.randomization_state[name]))
        self._pending_log = dict(self._startup_log)
        self.scene.invalidate()
        if self._graphed is not None:  # tensors were replaced: capture again
            self._graphed.invalidate()

    def take_sim_warnings(self) -> dict[str, int]:
        """MuJoCo's warnings since the last call (message -> count; counted, not printed: see
        canter.sim.mjwarnings). Process-wide: every env of this process reports into one count."""
        poll = getattr(self.sim, "poll_warnings", None)  # the warp backend's capacity overflows
        if poll is not None:
            poll()
        return mjwarnings.take()

    def close(self) -> None:
        pass
