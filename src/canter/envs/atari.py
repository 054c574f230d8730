"""Atari 2600 games as a Canter VecEnv: ale-py's C++ vector environment (`ale_py.ALEVectorInterface`:
every game stepped on a thread pool, ROMs shipped in ale-py's wheel), seen through the env protocol.

What the learner sees, per env: a uint8 stack of the last `stack` frames, (stack, 84, 84) grayscale, as
the observation group "policy" (observation_dtypes says uint8; the CNN scales it by 1/255). The
emulator does that preprocessing itself, in C++ on its worker threads: frame skip with a max over the
last two frames (flicker), grayscale, area resize to 84x84, frame stack. `canter bench atari` measures
it against the same preprocessing in torch on the raw frames (BENCHMARKS.md §16).

Actions come as (num_envs, num_actions) rows (a categorical policy's one-hot samples, or its logits
for the greedy action) and the env takes their argmax; a (num_envs,) integer tensor is taken as is.
`discrete_actions` is True, so the learner builds a categorical policy (canter.rl.factory).

Evaluation protocol (Machado et al. 2018, "Revisiting the ALE"): frame skip 4, sticky actions with
p = 0.25, the minimal action set, up to 30 no-op starts and FIRE at the start of games that need it,
an episode is a whole game up to 108,000 frames (27,000 agent steps, then a time-out). Two training
aids, on by default and never used for scores: `episodic_life` (a lost life is terminal for the
learner, no bootstrap, while the game goes on: the classic DQN setting) and `clip_rewards` (the learner
gets sign(r)). `extras["episode_return"]` is always the unclipped game score and `extras["episode_end"]`
marks real game ends, which the runner and `canter eval` count (a lost life is not an episode).
`evaluation()` turns both aids off. Training may also play with other sticky actions than the protocol's
(`train_repeat_action_probability`, e.g. 0: deterministic emulators), for the whole of training or
for its first `train_repeat_action_frames` frames (a curriculum: learn the game on deterministic
emulators, then adapt to the protocol's; at the switch the emulators are rebuilt and every game is cut
as a time-out); every evaluation plays with the protocol's.

The emulators' states are not saved: a resumed run starts new games (state_dict holds the counters).
"""

from __future__ import annotations

import dataclasses
import difflib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from canter.core.device import resolve_device
from canter.core.errors import ConfigError
from canter.core.validate import Validated, fail, require_at_least, require_in_range

FRAMES_PER_SECOND = 60.0  # the Atari 2600's NTSC frame rate


@dataclass(kw_only=True)
class AtariEnvCfg(Validated):
    """A batch of `num_envs` games of one Atari title.

    game: ale-py's ROM id, snake_case ("pong", "breakout", "space_invaders"; `canter list` names the task).
    frameskip: emulator frames per agent step (the action repeats; the observation keeps the max of
        the last two frames). repeat_action_probability: sticky actions of the protocol (0.25: the
        Machado et al. protocol; every evaluation plays with it). train_repeat_action_probability:
        sticky actions while training, where they differ (None: the protocol's).
        train_repeat_action_frames: training frames (all games, agent steps x frameskip) played with
        train_repeat_action_probability before training switches to the protocol's (None: never
        switch; a resumed run switches where it left off). max_episode_frames:
        game frames before a time-out. noop_max: up to this many no-op frames at each game start.
        use_fire_reset: press FIRE at game start where the game needs it.
    stack, size: frames per observation and their side in pixels. num_threads: emulator threads
        (0: one per core). episodic_life, clip_rewards: training aids (see the module doc).
    """

    game: str = "pong"
    num_envs: int = 64
    device: str = "cpu"
    seed: int = 0
    frameskip: int = 4
    repeat_action_probability: float = 0.25
    train_repeat_action_probability: float | None = None
    train_repeat_action_frames: int | None = None
    max_episode_frames: int = 108_000
    noop_max: int = 30
    use_fire_reset: bool = True
    full_action_space: bool = False
    stack: int = 4
    size: int = 84
    num_threads: int = 0
    episodic_life: bool = True
    clip_rewards: bool = True

    config_name = "env"

    def validate(self) -> None:
        require_at_least(self, "num_envs", 1, integer=True)
        require_at_least(self, "seed", 0, integer=True)
        require_at_least(self, "frameskip", 1, integer=True)
        require_in_range(self, "repeat_action_probability", 0.0, 1.0)
        if self.train_repeat_action_probability is not None:
            require_in_range(self, "train_repeat_action_probability", 0.0, 1.0)
        if self.train_repeat_action_frames is not None:
            require_at_least(self, "train_repeat_action_frames", 1, integer=True)
            if self.train_repeat_action_probability is None:
                raise fail("train_repeat_action_frames", "needs train_repeat_action_probability (the sticky "
                           "actions to play before the switch)")
        require_at_least(self, "max_episode_frames", 1, integer=True)
        require_at_least(self, "noop_max", 0, integer=True)
        require_at_least(self, "stack", 1, integer=True)
        require_at_least(self, "size", 8, integer=True)
        require_at_least(self, "num_threads", 0, integer=True)
        rom_path(self.game)

    @property
    def sticky_actions(self) -> float:
        """The repeat-action probability the emulators play with under this config."""
        train = self.train_repeat_action_probability
        return self.repeat_action_probability if train is None else train

    def evaluation(self) -> AtariEnvCfg:
        """A copy for scoring: no episodic life, unclipped rewards, the protocol's sticky actions."""
        return dataclasses.replace(self, episodic_life=False, clip_rewards=False, **_PROTOCOL_STICKY)

    def after_switch(self) -> AtariEnvCfg:
        """A copy for training past train_repeat_action_frames: the protocol's sticky actions."""
        return dataclasses.replace(self, **_PROTOCOL_STICKY)


_PROTOCOL_STICKY: dict[str, Any] = {"train_repeat_action_probability": None, "train_repeat_action_frames": None}


def rom_path(game: str) -> str:
    """The path of ale-py's ROM of `game`; ConfigError (one line) for an unknown game or a missing ROM."""
    from ale_py import roms

    known = roms.get_all_rom_ids()
    if game not in known:
        close = difflib.get_close_matches(game.replace("-", "_").lower(), known, n=3)
        hint = (f" (did you mean {', '.join(close)}?)" if close
                else f" (ale-py ships {len(known)} games, e.g. pong, breakout, space_invaders)")
        raise fail("game", f"unknown Atari game {game!r}{hint}")
    try:
        path = roms.get_rom_path(game)
    except OSError as err:
        path, reason = None, " ".join(str(err).split())[:120]
    else:
        reason = "not found"
    if path is None or not os.path.isfile(path):
        raise ConfigError(f"env.game: the ROM of {game!r} is missing or damaged ({reason}; "
                          f"ALE_ROMS_DIR={os.environ.get('ALE_ROMS_DIR', 'unset')}): reinstall ale-py")
    return str(path)


def _vector_interface(cfg: AtariEnvCfg) -> Any:
    """ale-py's vector env of `cfg`'s games, with the emulator doing frame skip, max-pool, grayscale,
    resize and stack, and none of its own training aids (AtariEnv applies them)."""
    from ale_py import ALEVectorInterface

    return ALEVectorInterface(
        rom_path=Path(rom_path(cfg.game)), num_envs=cfg.num_envs, frame_skip=cfg.frameskip, stack_num=cfg.stack,
        img_height=cfg.size, img_width=cfg.size, grayscale=True, maxpool=True, noop_max=cfg.noop_max,
        use_fire_reset=cfg.use_fire_reset, episodic_life=False, life_loss_info=False, reward_clipping=False,
        max_episode_steps=cfg.max_episode_frames, repeat_action_probability=cfg.sticky_actions,
        full_action_space=cfg.full_action_space, batch_size=0, num_threads=cfg.num_threads,
        thread_affinity_offset=-1, autoreset_mode="SameStep",
    )


class AtariEnv:
    """`cfg.num_envs` games of `cfg.game` behind the Canter VecEnv protocol (canter.envs.vec_env)."""

    discrete_actions = True

    def __init__(self, cfg: AtariEnvCfg, console: Any = None):
        cfg.validate()
        self.cfg = cfg
        self.device = resolve_device(cfg.device)
        self.num_envs = cfg.num_envs
        self.ale = _vector_interface(cfg)
        self.action_set = list(self.ale.get_action_set())
        self.num_actions = len(self.action_set)
        self.step_dt = cfg.frameskip / FRAMES_PER_SECOND
        self.max_episode_length = -(-cfg.max_episode_frames // cfg.frameskip)
        self.episode_return = torch.zeros(self.num_envs, device=self.device)
        self.episode_length_buf = torch.zeros(self.num_envs, dtype=torch.long, device=self.device)
        self._lives = torch.zeros(self.num_envs, dtype=torch.long, device=self.device)
        self._games_started = 0
        self._frames = 0  # frames played in training (all games), for train_repeat_action_frames
        self._env_ids = np.arange(self.num_envs)
        self.obs_buf: dict[str, torch.Tensor] = {}
        if console is not None:
            console.print(f"[bold]Atari[/bold] {cfg.game}: {self.num_envs} games, {self.num_actions} actions, "
                          f"frame skip {cfg.frameskip}, sticky actions {cfg.sticky_actions}, "
                          f"episodic life {cfg.episodic_life}, reward clipping {cfg.clip_rewards}")

    @property
    def action_names(self) -> list[str]:
        """The names of the action set, in action-index order (e.g. NOOP, FIRE, RIGHT, LEFT, ...)."""
        return [getattr(action, "name", str(action)) for action in self.action_set]

    # --- VecEnv -----------------------------------------------------------------------------------
    @property
    def observation_shapes(self) -> dict[str, tuple[int, ...]]:
        return {"policy": (self.cfg.stack, self.cfg.size, self.cfg.size)}

    @property
    def observation_dtypes(self) -> dict[str, torch.dtype]:
        return {"policy": torch.uint8}

    def reset(self) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
        """New games in every env, seeded from cfg.seed (and how many games this env started before)."""
        base = (self.cfg.seed * 1_000_003 + self._games_started) % 2**31
        seeds = (np.arange(self.num_envs, dtype=np.int64) + base) % (2**31 - 1)
        self._games_started += self.num_envs
        obs, info = self.ale.reset(np.arange(self.num_envs, dtype=np.int32), seeds.astype(np.int32))
        self.episode_return.zero_()
        self.episode_length_buf.zero_()
        self._lives.copy_(self._to_device(info["lives"]).long())
        self.obs_buf = {"policy": self._to_device(obs)}
        return self.obs_buf, {"log": {}}

    def get_observations(self) -> dict[str, torch.Tensor]:
        return self.obs_buf

    def step(
        self, actions: torch.Tensor
    ) -> tuple[dict[str, torch.Tensor], torch.Tensor, torch.Tensor, torch.Tensor, dict[str, Any]]:
        self.ale.send(self.action_indices(actions), np.ones(self.num_envs, dtype=np.float32))
        obs, reward, game_over, truncated, info = self.ale.recv()
        env_id = info["env_id"]
        if not np.array_equal(env_id, self._env_ids):  # rows come in env order when all envs step; make sure
            order = np.argsort(env_id)
            obs, reward, game_over, truncated = obs[order], reward[order], game_over[order], truncated[order]
            info = {key: value[order] for key, value in info.items()}
        score = self._to_device(reward).float()
        game_over_t = self._to_device(game_over)
        truncated_t = self._to_device(truncated) & ~game_over_t
        ended = game_over_t | truncated_t
        lives = self._to_device(info["lives"]).long()
        # a lost life: fewer lives in the same game (an ended game's info is the new game's)
        life_lost = (lives < self._lives) & ~ended
        self._lives.copy_(lives)
        terminated = game_over_t | (life_lost if self.cfg.episodic_life else torch.zeros_like(life_lost))
        self.episode_return += score
        self.episode_length_buf += 1
        extras: dict[str, Any] = {
            "log": {},
            "episode_return": self.episode_return.clone(),
            "episode_length": self.episode_length_buf.float(),
            "episode_end": ended,
        }
        self.episode_return.masked_fill_(ended, 0.0)
        self.episode_length_buf.masked_fill_(ended, 0)
        self.obs_buf = {"policy": self._to_device(obs)}
        learner_reward = score.sign() if self.cfg.clip_rewards else score
        self._frames += self.num_envs * self.cfg.frameskip
        # the curriculum's switch: where the stickiness changes, every game is cut (a time-out for the
        # learner, not a game end for the scores) and new ones start on the rebuilt emulators
        if self._switch_due() and self._play_under(self.cfg.after_switch()):
            self.reset()
            truncated_t = ~terminated
        return self.obs_buf, learner_reward, terminated, truncated_t, extras

    def action_indices(self, actions: torch.Tensor) -> np.ndarray:
        """(num_envs,) int32 indices into the action set: the argmax of each row, or the integers given."""
        if actions.dim() == 2:
            if actions.shape != (self.num_envs, self.num_actions):
                raise ValueError(f"actions: expected ({self.num_envs}, {self.num_actions}), got {tuple(actions.shape)}")
            actions = actions.argmax(dim=1)
        elif actions.shape != (self.num_envs,) or actions.is_floating_point():
            raise ValueError(f"actions: expected ({self.num_envs}, {self.num_actions}) rows or ({self.num_envs},) integers")
        return actions.to("cpu", torch.int32).numpy()

    def evaluation(self) -> None:
        """Score from here on: no episodic life, unclipped rewards (games already running go on), and
        the protocol's sticky actions: where training played with others, the emulators are rebuilt
        and every env starts a new game."""
        if self._play_under(self.cfg.evaluation()):
            self.reset()

    def _switch_due(self) -> bool:
        """Training has played its train_repeat_action_frames and still plays training's stickiness."""
        switch_at = self.cfg.train_repeat_action_frames
        return switch_at is not None and self._frames >= switch_at

    def _play_under(self, cfg: AtariEnvCfg) -> bool:
        """Play under `cfg` from here on. True: the emulators had other sticky actions and were
        rebuilt, so the caller starts new games."""
        rebuilt = cfg.sticky_actions != self.cfg.sticky_actions
        self.cfg = cfg
        if rebuilt:
            self.ale = _vector_interface(cfg)
        return rebuilt

    def state_dict(self) -> dict[str, Any]:
        """The counters only: the emulators' states are not saved (a resumed run starts new games)."""
        return {"games_started": self._games_started, "frames": self._frames}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self._games_started = int(state["games_started"])
        self._frames = int(state.get("frames", 0))  # checkpoints before train_repeat_action_frames: 0
        if self._switch_due():
            self._play_under(self.cfg.after_switch())
        self.reset()

    def close(self) -> None:
        """Nothing to release early: the emulators and their threads go with the env."""

    def _to_device(self, array: np.ndarray) -> torch.Tensor:
        tensor = torch.from_numpy(np.ascontiguousarray(array))
        return tensor if self.device.type == "cpu" else tensor.to(self.device, non_blocking=True)
