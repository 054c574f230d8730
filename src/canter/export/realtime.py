"""A fixed-rate real-time control loop with one MuJoCo simulation standing in for the robot.

Every tick (period 1/rate of wall time): read the raw sensor terms of the policy's observation group
from the simulated robot, run the exported policy through the torch-free runtime (which applies the
clip/scale/history of the metadata and keeps the recurrent state and last action), write the actions
(the env maps them to actuator commands and advances the physics by one period, 1/rate of simulated
time), then sleep until the next tick. The simulation thus keeps pace with the wall clock, as a robot
would. Timing is measured with time.perf_counter:

- inference latency: the runtime call alone (observation mapping + onnxruntime);
- work: read + infer + write (the write includes the physics of the period);
- period jitter: |actual tick-to-tick interval - period|;
- deadline miss: a tick whose work ended after the next tick was due. Ticks whose whole period
  passed meanwhile are skipped (the schedule moves on), as a hardware timer would drop them, so the
  loop ends after `duration` seconds of wall time.

A policy with image inputs (a wrist camera) gets each tick the image its observation group renders
for env 0, as the robot's camera would give it: rendered without the training-time pixel noise, and
inside the read's time.

A policy that plays an Atari game (metadata `game`) plays one game of ale-py's emulator instead, at the
game's own pace: 60 frames a second, one tick per frame skip (15 Hz for a skip of 4). Each tick reads
the emulator's preprocessed frame stack, the runtime picks the action (`commands`: the largest
logit), and the emulator plays it for the frame skip. Games are scored as `canter eval` scores them
(the protocol's sticky actions, whole games, unclipped scores); an episode is a game, ended by
`game_over` or `time_out` (the frame cap).

Also checked every tick that does not end an episode: the runtime's own actuator commands (metadata
offset + scale·action, or a relative term's moved targets) against the commands the env wrote into
the simulator (`ctrl_max_abs_diff`). The runtime maps the actions the actuators received
(`ActionManager.received_action`): on a task that randomizes the action path (noise, bias, latency:
`*-dr`) those are not the policy's, and the check is of the mapping itself. Where the actions are no
actuator commands (an end-effector delta, a quadruped controller's targets, a game's choice) there is
nothing of the runtime's to compare, and the check reports None; `ctrl_check` says why.

On a machine that runs other processes, the inference of a tick is slower than back-to-back calls
(`canter bench latency`): between ticks other processes evict the policy's weights and code from
the caches (measured on the shared 2-core machine: 15 µs back to back, 150-300 µs 5-20 ms apart).
"""

from __future__ import annotations

import dataclasses
import gc
import math
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from canter.core.device import torch_threads
from canter.core.errors import CanterError
from canter.envs.atari import AtariEnv, AtariEnvCfg
from canter.envs.manager_env import ManagerBasedRLEnv
from canter.export.describe import observation_terms
from canter.export.runtime import PolicyRuntime
from canter.runs.args import apply_command, apply_photos
from canter.tasks import REGISTRY


@dataclass(kw_only=True)
class RealtimeCfg:
    """rate_hz: loop rate (None: the policy's control frequency). duration_s: wall time to run (None:
    10 s, or until `episodes` have ended when that is set). episodes: stop once this many episodes have
    ended (None: run for duration_s). paced: ticks follow the wall clock at rate_hz; False runs them
    back to back (the physics still advances 1/rate_hz per tick), to score an exported file over many
    episodes quickly: no deadlines or jitter then. spin_us: the last microseconds before a tick are
    busy-waited instead of slept (punctual wake-ups for a few % of one core). seed: of the stand-in env
    (initial state, commands). photos: where a task composes camera images over photos, take them from
    "train", "unseen" (kept out of training) or a folder, as they are (as `canter eval --photos`).
    command: velocity tasks hold (vx, vy, wz) throughout."""

    rate_hz: float | None = None
    duration_s: float | None = None
    episodes: int | None = None
    paced: bool = True
    spin_us: float = 200.0
    seed: int = 0
    photos: str | None = None
    command: tuple[float, float, float] | None = None

    def __post_init__(self) -> None:
        if self.rate_hz is not None and not self.rate_hz > 0:
            raise CanterError(f"--rate: must be > 0 Hz, got {self.rate_hz}")
        if self.duration_s is not None and not self.duration_s > 0:
            raise CanterError(f"--duration: must be > 0 s, got {self.duration_s}")
        if self.episodes is not None and self.episodes < 1:
            raise CanterError(f"--episodes: must be >= 1, got {self.episodes}")
        if self.spin_us < 0:
            raise CanterError(f"--spin-us: must be >= 0, got {self.spin_us}")

    @property
    def wall_limit_s(self) -> float | None:
        """Seconds of wall time the loop may run (None: until `episodes` have ended)."""
        if self.duration_s is not None:
            return self.duration_s
        return None if self.episodes is not None else 10.0


def _steps_per_tick(runtime: PolicyRuntime, rate_hz: float) -> int:
    """Physics steps (emulator frames) per tick at rate_hz; CanterError if not a whole number."""
    md = runtime.metadata
    decimation = round(1.0 / (rate_hz * md.physics_dt))
    if decimation < 1 or not math.isclose(decimation * md.physics_dt * rate_hz, 1.0, rel_tol=1e-6):
        unit = "emulator frames" if md.game is not None else "physics steps"
        raise CanterError(f"--rate {rate_hz:g} Hz is not a whole number of {unit} of {md.physics_dt:g} s")
    return decimation


def stand_in_env(runtime: PolicyRuntime, task: str, rate_hz: float, seed: int, *, photos: str | None = None,
                 command: tuple[float, float, float] | None = None) -> ManagerBasedRLEnv:
    """One env of `task` on the cpu, stepping 1/rate_hz of physics per control step (photos and command:
    see RealtimeCfg), in evaluation mode as `canter eval` plays it (training-only aids off: a goal or
    randomization curriculum at its full range); its policy observation group must have the policy's layout."""
    md = runtime.metadata
    if md.game is not None:
        raise CanterError(f"task {task!r} is a MuJoCo robot; the policy plays the Atari game {md.game['rom']!r}")
    decimation = _steps_per_tick(runtime, rate_hz)
    cfg = REGISTRY.get_mujoco(task, "deploy run").env_cfg()
    if photos is not None:
        apply_photos(cfg, photos, as_they_are=True)
    if command is not None:
        note = apply_command(cfg, command)
        if note:
            print(f"note: {note}", file=sys.stderr)
    cfg.num_envs, cfg.device, cfg.seed, cfg.decimation = 1, "cpu", seed, decimation
    cfg.sim.num_threads = 1
    env = ManagerBasedRLEnv(cfg)
    env.evaluation()  # scored as `canter eval` scores: e.g. the hand's full goal set and full randomization ranges
    if not math.isclose(env.physics_dt, md.physics_dt, rel_tol=1e-9):
        raise CanterError(f"task {task!r} steps physics at {env.physics_dt:g} s, the policy was trained at {md.physics_dt:g} s")
    have = [(t.name, t.width) for t in observation_terms(env, md.observation_group)]
    want = [(t.name, t.width) for t in md.observation_terms]
    if have != want:
        raise CanterError(f"task {task!r} observes {have}, the policy expects {want}")
    if env.num_actions != md.action_dim:
        raise CanterError(f"task {task!r} has {env.num_actions} actions, the policy {md.action_dim}")
    for spec in md.image_inputs:
        group = spec["group"]
        shape = env.observation_shapes.get(group)
        if shape is None or list(shape) != list(spec["shape"]):
            raise CanterError(f"task {task!r} has no image group {group!r} of shape {tuple(spec['shape'])} "
                              f"(it has {None if shape is None else tuple(shape)})")
        (term,) = env.observation_manager.groups[group]
        if term.cfg.history_length or term.cfg.clip is not None or term.cfg.scale is not None:
            raise CanterError(f"deploy run: image group {group!r} stacks, clips or scales its frames; the real-time "
                              "loop feeds the camera's frames as they are")
    return env


def game_stand_in_env(runtime: PolicyRuntime, task: str, rate_hz: float, seed: int) -> AtariEnv:
    """One game of the policy's ROM (metadata `game`) with `task`'s settings otherwise, scored as in
    evaluation (the protocol's sticky actions, whole games, unclipped), on one emulator thread; its
    frames and action set must be the policy's."""
    md = runtime.metadata
    spec = REGISTRY.get(task)
    if md.game is None:
        raise CanterError(f"task {task!r} is an Atari game; the policy drives a robot (task {md.task!r})")
    if spec.kind != "atari":
        raise CanterError(f"task {task!r} is a MuJoCo robot; the policy plays the Atari game {md.game['rom']!r}")
    game = md.game
    cfg = spec.env_cfg()
    assert isinstance(cfg, AtariEnvCfg)
    cfg = dataclasses.replace(cfg, game=str(game["rom"]), num_envs=1, device="cpu", seed=seed, num_threads=1,
                              frameskip=_steps_per_tick(runtime, rate_hz), stack=int(game["stack"]),
                              size=int(game["resize"][0]), full_action_space=bool(game["full_action_space"]),
                              repeat_action_probability=float(game["repeat_action_probability"]),
                              noop_max=int(game["noop_max"]), use_fire_reset=bool(game["fire_reset"]),
                              max_episode_frames=int(game["max_episode_frames"])).evaluation()
    env = AtariEnv(cfg)
    names = env.action_names
    if names != list(game["action_set"]):
        raise CanterError(f"the emulator's action set of {game['rom']!r} is {names}, the policy's {game['action_set']}")
    (image,) = md.image_inputs
    if list(env.observation_shapes["policy"]) != list(image["shape"]):
        raise CanterError(f"the emulator's frames are {env.observation_shapes['policy']}, the policy reads {image['shape']}")
    return env


Reading = tuple[dict[str, np.ndarray], dict[str, np.ndarray]]


def sensor_reader(env: ManagerBasedRLEnv, runtime: PolicyRuntime) -> Callable[[], Reading]:
    """A function returning, for env 0, the raw (noise-free, unscaled) values of the policy group's
    terms as the robot's sensors would give them (last-action terms are left to the runtime), and the
    images of the policy's image inputs, group -> (C, H, W) in the dtype the policy reads."""
    md = runtime.metadata
    terms = [t for t in env.observation_manager.groups[md.observation_group]
             if not any(i.name == t.name and i.function.endswith(":last_action") for i in md.observation_terms)]
    cameras = [(spec["group"], env.observation_manager.groups[spec["group"]][0], np.dtype(spec["dtype"]))
               for spec in md.image_inputs]

    def read() -> Reading:
        values = {t.name: t.func(env, **t.params)[0].numpy() for t in terms}
        images = {group: term.func(env, **term.params)[0].numpy().astype(dtype, copy=False)
                  for group, term, dtype in cameras}
        return values, images

    return read


@dataclass(kw_only=True)
class StandIn:
    """What the loop drives: `read()` the raw terms and images of env 0; `write(actions)` steps the env
    with the runtime's actions and returns env.step's result; `ended_by(step)` names what ended env
    0's episode on that step."""

    env: ManagerBasedRLEnv | AtariEnv
    read: Callable[[], Reading]
    write: Callable[[np.ndarray], tuple]
    ended_by: Callable[[tuple], str]


def stand_in(runtime: PolicyRuntime, task: str, rate_hz: float, cfg: RealtimeCfg) -> StandIn:
    """The simulated robot, or the emulated game, that the loop drives (see the module doc)."""
    if REGISTRY.get(task).kind == "atari" or runtime.metadata.game is not None:
        if cfg.photos is not None or cfg.command is not None:
            raise CanterError(f"--{'photos' if cfg.photos is not None else 'command'}: task {task!r} is an Atari game")
        game = game_stand_in_env(runtime, task, rate_hz, cfg.seed)

        def play(actions: np.ndarray) -> tuple:
            choice = int(runtime.commands(actions)["game"]["action"])
            return game.step(torch.tensor([choice]))

        def frames() -> Reading:
            return {}, {"policy": game.get_observations()["policy"][0].numpy()}

        return StandIn(env=game, read=frames, write=play, ended_by=lambda step: "game_over" if bool(step[2][0]) else "time_out")
    env = stand_in_env(runtime, task, rate_hz, cfg.seed, photos=cfg.photos, command=cfg.command)

    def ended_by(step: tuple) -> str:
        terminations = env.termination_manager
        return terminations.names[int(terminations.term_dones[:, 0].float().argmax())]

    return StandIn(env=env, read=sensor_reader(env, runtime),
                   write=lambda actions: env.step(torch.from_numpy(actions).unsqueeze(0)), ended_by=ended_by)


def _sleep_until(deadline: float, spin_s: float) -> None:
    remaining = deadline - time.perf_counter()
    if remaining > spin_s:
        time.sleep(remaining - spin_s)
    while time.perf_counter() < deadline:
        pass


def _percentiles_us(values: np.ndarray) -> dict[str, float] | None:
    """p50, p99, max and mean in µs of `values` in s; None when there are none (a loop stopped before its first tick)."""
    if values.size == 0:
        return None
    us = values * 1e6
    return {"p50": float(np.percentile(us, 50)), "p99": float(np.percentile(us, 99)), "max": float(us.max()),
            "mean": float(us.mean())}


class _Episodes:
    """Returns of the episodes the loop saw, and the check of the runtime's actuator commands."""

    def __init__(self) -> None:
        self.returns: list[float] = []
        self.endings: list[str] = []  # per episode: the first termination term that fired (success, time_out, ...)
        self.current = 0.0
        self.ctrl_diff = 0.0

    def record(self, stand_in: StandIn, runtime: PolicyRuntime, actions: np.ndarray, step: tuple) -> None:
        _, reward, terminated, truncated, extras = step
        self.current += float(reward[0])
        if bool(terminated[0] | truncated[0]):  # the env has reset the robot (and its ctrl), or started a new game
            self.returns.append(float(extras["episode_return"][0]))
            self.endings.append(stand_in.ended_by(step))
            self.current = 0.0
            runtime.reset()
        elif runtime.metadata.actions_are_commands:
            # the actions the actuators received: on a task with domain randomization of the action path
            # (noise, bias, latency) they are not the policy's, and the check is of the mapping itself
            env = stand_in.env
            assert isinstance(env, ManagerBasedRLEnv)
            received = env.action_manager.received_action()[0].numpy()
            self.ctrl_diff = max(self.ctrl_diff, float(np.abs(runtime.ctrl(received) - env.sim.ctrl[0].numpy()).max()))


def run_realtime(runtime: PolicyRuntime, task: str, cfg: RealtimeCfg, progress: Callable[[str], None] | None = None,
                 *, robot: StandIn | None = None, after_tick: Callable[[], None] | None = None,
                 should_stop: Callable[[], bool] | None = None) -> dict[str, Any]:
    """Runs the loop until cfg.wall_limit_s of wall time has passed (paced: round(limit · rate)
    scheduled ticks, minus the skipped ones), cfg.episodes episodes have ended or should_stop() says
    so (asked after every tick), and returns its timing and return statistics (times in µs).
    progress gets a line every 10 s of wall time. robot: the stand-in to drive (default: built here by
    `stand_in`). after_tick: called after each tick's measured work (e.g. to film the stand-in); in a
    paced loop its time can make the next tick late."""
    rate = cfg.rate_hz or runtime.metadata.control_frequency_hz
    robot = robot if robot is not None else stand_in(runtime, task, rate, cfg)
    env, read = robot.env, robot.read
    period, spin = 1.0 / rate, cfg.spin_us * 1e-6
    limit = cfg.wall_limit_s
    scheduled = None if limit is None else max(1, round(limit * rate))
    starts: list[float] = []
    infer: list[float] = []
    work: list[float] = []
    episodes, slot, misses = _Episodes(), 0, 0
    load_start = os.getloadavg()[0]
    env.reset()
    runtime.reset()
    gc.collect()
    gc.disable()  # a collection pause inside a tick would be a deadline miss of our making
    begin = time.perf_counter()
    next_report = begin + 10.0

    def more() -> bool:
        if cfg.episodes is not None and len(episodes.returns) >= cfg.episodes:
            return False
        if should_stop is not None and should_stop():
            return False
        if not cfg.paced:
            return limit is None or time.perf_counter() - begin < limit
        return scheduled is None or slot < scheduled

    try:
        with torch_threads(1), torch.no_grad():
            next_tick = begin + period
            while more():
                if cfg.paced:
                    _sleep_until(next_tick, spin)
                start = time.perf_counter()
                terms, images = read()
                t0 = time.perf_counter()
                actions = runtime.act_raw(terms, images)
                infer.append(time.perf_counter() - t0)
                step = robot.write(actions)
                end = time.perf_counter()
                starts.append(start)
                work.append(end - start)
                episodes.record(robot, runtime, actions, step)
                if after_tick is not None:
                    after_tick()
                slot, next_tick = slot + 1, next_tick + period
                if cfg.paced and end > next_tick:
                    misses += 1
                    behind = max(0, math.floor((time.perf_counter() - next_tick) / period))
                    slot, next_tick = slot + behind, next_tick + behind * period
                if progress is not None and end >= next_report:
                    next_report += 10.0
                    progress(f"{slot}" + (f"/{scheduled}" if scheduled is not None and cfg.paced else "")
                             + f" ticks, {len(episodes.returns)} episodes")
    finally:
        gc.enable()
    executed = len(starts)
    due = slot if scheduled is None else min(slot, scheduled)  # ticks that came due (a skip may overshoot the end)
    md = runtime.metadata
    ctrl_check = "runtime.ctrl against the env's ctrl" if md.actions_are_commands else (
        "none: " + ", ".join(f"{t.name} ({t.kind})" for t in md.action_terms if not t.is_commands)
        + (" chooses among the game's actions: there are no actuator commands" if md.game is not None
           else " asks a controller for targets, not for actuator commands"))
    jitter = np.abs(np.diff(starts) - period) if executed > 1 else np.zeros(1)
    return {
        "task": task, "policy": str(runtime.path), "architecture": runtime.metadata.architecture,
        "quantization": runtime.metadata.quantization, "rate_hz": rate,
        "trained_rate_hz": runtime.metadata.control_frequency_hz, "paced": cfg.paced,
        "duration_s": 0.0 if not executed else float(starts[-1] - starts[0] + period) if cfg.paced
        else float(starts[-1] + work[-1] - begin),
        "scheduled_ticks": due if cfg.paced else None, "ticks": executed,
        "skipped_ticks": due - executed if cfg.paced else 0, "deadline_misses": misses if cfg.paced else None,
        "inference_us": _percentiles_us(np.array(infer)), "work_us": _percentiles_us(np.array(work)),
        "period_jitter_us": _percentiles_us(jitter) if cfg.paced and executed else None,
        "ctrl_max_abs_diff": episodes.ctrl_diff if md.actions_are_commands else None,
        "ctrl_check": ctrl_check,
        "episodes": len(episodes.returns), "episode_returns": episodes.returns, "episode_endings": episodes.endings,
        "ended_by": {name: episodes.endings.count(name) / len(episodes.endings) for name in sorted(set(episodes.endings))},
        "mean_episode_return": float(np.mean(episodes.returns)) if episodes.returns else None,
        "unfinished_episode_return": episodes.current,
        "episodes_asked": cfg.episodes, "spin_us": cfg.spin_us, "loadavg_1min": [load_start, os.getloadavg()[0]],
        "photos": cfg.photos, "command": None if cfg.command is None else list(cfg.command),
    }
