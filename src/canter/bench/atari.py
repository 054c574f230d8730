"""Atari frames per second, side by side in one run on one machine (seed 002's CuLE question on a CPU):

(a) raw: ale-py's vector env (`ale_py.vector_env.AtariVectorEnv`), its C++ preprocessing, random
    actions as numpy: the emulator's ceiling on this machine;
(b) canter: canter.envs.atari.AtariEnv, the env the learner trains on (actions as torch rows, the
    argmax, observations, rewards and flags as torch tensors, lives and episode bookkeeping);
(c) sync vector: Gymnasium's SyncVectorEnv of single `ALE/<Game>-v5` envs with Gymnasium's
    AtariPreprocessing (grayscale, 84x84 resize) and FrameStackObservation wrappers: the classic pipeline;
(d) torch preprocessing: the vector env giving full 210x160 grayscale frames, resized to 84x84 by area
    averaging and stacked in torch, to check whether preprocessing belongs in torch or in the emulator.

Frames are emulator frames (agent steps x frame skip). Each side runs `seconds` per repetition,
`repeats` times, alternating; medians are reported.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import torch

from canter.core.errors import ConfigError
from canter.envs.atari import AtariEnv, AtariEnvCfg, rom_path


@dataclass
class AtariBenchResult:
    game: str
    num_envs: int
    threads: int
    frameskip: int
    repeats: int
    raw_frames_per_s: float
    canter_frames_per_s: float
    sync_vector_frames_per_s: float | None
    torch_preprocess_frames_per_s: float | None
    canter_vs_raw: float
    canter_vs_sync_vector: float | None
    runs: dict[str, list[float]]
    skipped: dict[str, str]  # side -> why it did not run

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _time(step: Callable[[], object], seconds: float, frames_per_step: int) -> float:
    """Frames per second of calling `step` for `seconds` (after one warm-up call)."""
    step()
    steps = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        step()
        steps += 1
    return steps * frames_per_step / (time.perf_counter() - start)


def _vector_kwargs(cfg: AtariEnvCfg, threads: int) -> dict[str, Any]:
    return dict(num_threads=threads, frameskip=cfg.frameskip, repeat_action_probability=cfg.sticky_actions,
                max_num_frames_per_episode=cfg.max_episode_frames, noop_max=cfg.noop_max, stack_num=cfg.stack,
                img_height=cfg.size, img_width=cfg.size, autoreset_mode="SameStep", reward_clipping=False)


def _raw(cfg: AtariEnvCfg, num_envs: int, threads: int, rng: np.random.Generator) -> tuple[Callable[[], object], Any]:
    from ale_py.vector_env import AtariVectorEnv

    env = AtariVectorEnv(cfg.game, num_envs, **_vector_kwargs(cfg, threads))
    env.reset(seed=cfg.seed)
    n = int(env.single_action_space.n)  # type: ignore[attr-defined]
    return lambda: env.step(rng.integers(0, n, num_envs, dtype=np.int32)), env


def _canter(cfg: AtariEnvCfg, num_envs: int, threads: int, generator: torch.Generator) -> tuple[Callable[[], object], Any]:
    env = AtariEnv(AtariEnvCfg(**{**asdict(cfg), "num_envs": num_envs, "num_threads": threads}))
    env.reset()
    return lambda: env.step(torch.rand(num_envs, env.num_actions, generator=generator)), env


def _torch_preprocess(cfg: AtariEnvCfg, num_envs: int, threads: int, rng: np.random.Generator) -> tuple[Callable[[], object], Any]:
    """Full-size grayscale frames from the emulator (its frame skip and max-pool kept), resized by area
    averaging to size x size and stacked in torch."""
    from ale_py.vector_env import AtariVectorEnv

    kwargs = {**_vector_kwargs(cfg, threads), "stack_num": 1, "img_height": 210, "img_width": 160}
    env = AtariVectorEnv(cfg.game, num_envs, **kwargs)
    env.reset(seed=cfg.seed)
    n = int(env.single_action_space.n)  # type: ignore[attr-defined]
    stack = torch.zeros(num_envs, cfg.stack, cfg.size, cfg.size, dtype=torch.uint8)

    def step() -> None:
        frames = torch.from_numpy(env.step(rng.integers(0, n, num_envs, dtype=np.int32))[0])  # (N, 1, 210, 160)
        small = torch.nn.functional.interpolate(frames.float(), size=(cfg.size, cfg.size), mode="area")
        stack[:, :-1] = stack[:, 1:].clone()
        stack[:, -1] = small[:, 0].round_().to(torch.uint8)

    return step, env


def _sync_vector(cfg: AtariEnvCfg, num_envs: int, rng: np.random.Generator) -> tuple[Callable[[], object], Any] | str:
    """The step of (c) and its env, or why it cannot run here."""
    try:
        import ale_py
        import cv2  # noqa: F401 - AtariPreprocessing resizes with OpenCV
        import gymnasium as gym
        from gymnasium.wrappers import AtariPreprocessing, FrameStackObservation
    except ImportError as err:
        return f"{err.name} is not installed (pip install 'canter[bench]')"
    gym.register_envs(ale_py)
    env_id = "ALE/" + "".join(part.capitalize() for part in cfg.game.split("_")) + "-v5"

    def make() -> Any:
        env = gym.make(env_id, frameskip=1, repeat_action_probability=cfg.sticky_actions,
                       max_num_frames_per_episode=cfg.max_episode_frames)
        env = AtariPreprocessing(env, noop_max=cfg.noop_max, frame_skip=cfg.frameskip, screen_size=cfg.size)
        return FrameStackObservation(env, cfg.stack)

    try:
        env = gym.vector.SyncVectorEnv([make for _ in range(num_envs)],
                                       autoreset_mode=gym.vector.AutoresetMode.SAME_STEP)
    except gym.error.Error as err:
        return " ".join(str(err).split())[:120]
    env.reset(seed=cfg.seed)
    n = int(env.single_action_space.n)  # type: ignore[attr-defined]
    return lambda: env.step(rng.integers(0, n, num_envs)), env


def bench_atari(game: str = "pong", num_envs: int = 64, threads: int = 0, seconds: float = 3.0, repeats: int = 3,
                sync_vector: bool = True, torch_preprocess: bool = True, seed: int = 0) -> AtariBenchResult:
    """(a)-(d) of the module doc, alternating, `repeats` times each."""
    if num_envs < 1 or repeats < 1 or not seconds > 0:
        raise ConfigError("bench atari: --num-envs and --repeats must be >= 1 and --seconds > 0")
    rom_path(game)
    from canter.core.device import available_cores

    threads = threads or available_cores()
    cfg = AtariEnvCfg(game=game, num_envs=num_envs, seed=seed)
    rng = np.random.default_rng(seed)
    generator = torch.Generator().manual_seed(seed)
    sides: dict[str, tuple[Callable[[], object], Any]] = {
        "raw": _raw(cfg, num_envs, threads, rng),
        "canter": _canter(cfg, num_envs, threads, generator),
    }
    if torch_preprocess:
        sides["torch_preprocess"] = _torch_preprocess(cfg, num_envs, threads, rng)
    skipped: dict[str, str] = {}
    if sync_vector:
        made = _sync_vector(cfg, num_envs, rng)
        if isinstance(made, str):
            skipped["sync_vector"] = made
        else:
            sides["sync_vector"] = made
    runs: dict[str, list[float]] = {name: [] for name in sides}
    with torch.inference_mode():
        for _ in range(repeats):
            for name, (step, _) in sides.items():
                runs[name].append(_time(step, seconds, num_envs * cfg.frameskip))
    for _, env in sides.values():
        env.close()
    median = {name: float(np.median(values)) for name, values in runs.items()}
    sync = median.get("sync_vector")
    return AtariBenchResult(
        game=game, num_envs=num_envs, threads=threads, frameskip=cfg.frameskip, repeats=repeats,
        raw_frames_per_s=median["raw"], canter_frames_per_s=median["canter"], sync_vector_frames_per_s=sync,
        torch_preprocess_frames_per_s=median.get("torch_preprocess"),
        canter_vs_raw=median["canter"] / median["raw"],
        canter_vs_sync_vector=None if sync is None else median["canter"] / sync,
        runs=runs, skipped=skipped,
    )
