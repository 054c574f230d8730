"""`canter bench sb3`: Canter against Gymnasium Ant-v5 + Stable-Baselines3 PPO, side by side.

Same machine, same run, same MJCF (Gymnasium's own ant.xml, loaded from the installed gymnasium
package for this benchmark only), same control step (5 x 0.01 s) and the same reward per step
(healthy + forward velocity - control cost; Gymnasium's contact cost, at most a few hundredths per
step, is subtracted back out of its side). Each side trains for the same wall time; then its final
policy is evaluated deterministically on fresh episodes. Reported: raw mujoco.batch.Batch FPS on
the model, each side's training frames/s, and each side's return.

Raw Batch with random controls steps ants that tumble and then lie still; a trained ant walks, and
its contacts cost MuJoCo a different amount (on a Zen 5 EPYC, 6 % less: BENCHMARKS.md section 5). And a
VM's speed drifts over a long run. So after Canter's training the raw ceiling is measured again,
both ways, in alternating repetitions: random controls on a fresh Batch, and Canter's own Batch
replaying integration states recorded while the trained policy acted (canter.bench.env's
RawOnEnvStates): raw's cost on the states the training ended on. Canter/raw is reported against
each. `sb3=False` runs Canter's side alone (the ratios only).
"""

from __future__ import annotations

import statistics
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from canter.bench.report import machine_info
from canter.core.device import torch_threads
from canter.core.errors import CanterError
from canter.core.files import save_figure
from canter.rl.runner import OnPolicyRunner
from canter.runs.args import TrainArgs, make_env, parse_train_args


def gymnasium_ant_xml() -> Path:
    try:
        import gymnasium
    except ImportError as err:
        raise CanterError(
            "this benchmark needs gymnasium[mujoco] and stable-baselines3: pip install -e '.[bench]'"
        ) from err
    path = Path(gymnasium.__file__).parent / "envs" / "mujoco" / "assets" / "ant.xml"
    if not path.is_file():
        raise CanterError(f"gymnasium's ant.xml is not at {path}")
    return path


def _random_control_step(model_path: Path, num_envs: int):
    """One raw step of a fresh Batch of the model: random controls, 5 substeps (Ant-v5's frame skip)."""
    import mujoco
    from mujoco.batch import Batch

    model = mujoco.MjModel.from_xml_path(str(model_path))
    batch = Batch(model, num_envs)
    ctrl = batch.bind("ctrl")
    rng = np.random.default_rng(0)
    low, high = model.actuator_ctrlrange[:, 0], model.actuator_ctrlrange[:, 1]

    def step() -> None:
        ctrl[:] = rng.uniform(low, high, ctrl.shape)
        batch.step(nstep=5)

    return step


def _steps_per_s(step, num_envs: int, seconds: float) -> float:
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        step()
        steps += 1
    return num_envs * steps / (time.perf_counter() - start)


def raw_batch_fps(model_path: Path, num_envs: int, seconds: float = 3.0, repeats: int = 3) -> float:
    step = _random_control_step(model_path, num_envs)
    return statistics.median(_steps_per_s(step, num_envs, seconds) for _ in range(repeats))


def raw_fps_at_the_end(env, policy, model_path: Path, seconds: float = 3.0, repeats: int = 3) -> dict[str, float]:
    """The raw ceiling after training, median steps/s of alternating repetitions: random controls on
    a fresh Batch, and the env's own Batch replaying states recorded while `policy` acted."""
    from canter.bench.env import RawOnEnvStates

    num_envs = env.num_envs
    with torch.no_grad():
        replay = RawOnEnvStates(env, env.sim, lambda: policy.act_inference(env.obs_buf), env.cfg.decimation)
    random_step = _random_control_step(model_path, num_envs)
    random_fps, states_fps = [], []
    for _ in range(repeats):
        random_fps.append(_steps_per_s(random_step, num_envs, seconds))
        replay.save()
        states_fps.append(_steps_per_s(replay.step, num_envs, seconds))
        replay.restore()
    return {"random_controls": statistics.median(random_fps), "policy_states": statistics.median(states_fps)}


def canter_train_args(model_path: Path, num_envs: int, seed: int, train_argv: list[str] | None = None) -> TrainArgs:
    """Canter's side as `canter train ant-classic` arguments; train_argv: more overrides (e.g. --agent.algo.autocast
    bf16). Parsed before anything is measured, so a bad option fails at once."""
    argv = ["--model", str(model_path), "--num-envs", str(num_envs), "--seed", str(seed), "--quiet", *(train_argv or [])]
    return parse_train_args("ant-classic", argv)


def train_canter(args: TrainArgs, model_path: Path, seconds: float, eval_episodes: int) -> dict[str, Any]:
    """Canter's side (args from canter_train_args) for `seconds` of wall time, then its evaluation."""
    num_envs, seed = args.env.num_envs, args.seed
    args.agent.max_iterations = 10**9
    env = make_env(args)
    curve: list[tuple[float, float]] = []
    totals: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        runner = OnPolicyRunner(env, args.agent, Path(tmp), seed=seed, cpu_physics=True)
        obs = env.reset()[0]
        runner.algorithm.train_mode()
        frames, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            obs, stats = runner.run_iteration(obs, None)
            frames += num_envs * args.agent.algo.num_steps_per_env
            totals.append(stats["total_fps"])
            curve.append((time.perf_counter() - start, stats["mean_return"]))
        wall = time.perf_counter() - start
        policy = runner.algorithm.policy
        runner.algorithm.eval_mode()
        raw_end = raw_fps_at_the_end(env, policy, model_path)
        eval_env = make_env(args, num_envs=eval_episodes)
        obs, _ = eval_env.reset()
        returns = torch.zeros(eval_episodes)
        finished = torch.zeros(eval_episodes, dtype=torch.bool)
        with torch.no_grad(), torch_threads(1):
            while not bool(finished.all()):
                obs, reward, terminated, truncated, _ = eval_env.step(policy.act_inference(obs))
                returns += torch.where(finished, 0.0, reward)
                finished |= terminated | truncated
    return {
        "frames_per_s": frames / wall,
        "total_fps_median": statistics.median(totals),
        "wall_time_s": wall,
        "frames": frames,
        "eval_mean_return": float(returns.mean()),
        "eval_std_return": float(returns.std()),
        "curve": curve,
        "raw_end_random_controls_steps_per_s": raw_end["random_controls"],
        "raw_end_policy_states_steps_per_s": raw_end["policy_states"],
    }


def train_sb3(seconds: float, num_envs: int, seed: int, eval_episodes: int) -> dict[str, Any]:
    try:
        import gymnasium
        from stable_baselines3 import PPO
        from stable_baselines3.common.callbacks import BaseCallback
        from stable_baselines3.common.env_util import make_vec_env
    except ImportError as err:
        raise CanterError(
            "this benchmark needs gymnasium[mujoco] and stable-baselines3: pip install -e '.[bench]'"
        ) from err

    curve: list[tuple[float, float]] = []

    class StopAfter(BaseCallback):
        def _on_training_start(self) -> None:
            self.start = time.perf_counter()

        def _on_rollout_end(self) -> None:
            infos = self.model.ep_info_buffer
            if infos:
                curve.append((time.perf_counter() - self.start, float(np.mean([i["r"] for i in infos]))))

        def _on_step(self) -> bool:
            return time.perf_counter() - self.start < seconds

    vec_env = make_vec_env("Ant-v5", n_envs=num_envs, seed=seed)
    model = PPO("MlpPolicy", vec_env, seed=seed, device="cpu", verbose=0)
    start = time.perf_counter()
    model.learn(total_timesteps=10**9, callback=StopAfter())
    wall = time.perf_counter() - start
    frames = int(model.num_timesteps)
    env = gymnasium.make("Ant-v5")
    returns = []
    for episode in range(eval_episodes):
        obs, _ = env.reset(seed=seed + 1000 + episode)
        total, done = 0.0, False
        while not done:
            action, _ = model.predict(obs, deterministic=True)
            obs, reward, terminated, truncated, info = env.step(action)
            total += float(reward) - float(info.get("reward_contact", 0.0))  # reward_contact is -cost
            done = terminated or truncated
        returns.append(total)
    return {
        "frames_per_s": frames / wall,
        "wall_time_s": wall,
        "frames": frames,
        "eval_mean_return": float(np.mean(returns)),
        "eval_std_return": float(np.std(returns)),
        "curve": curve,
    }


@dataclass(kw_only=True)
class Sb3CompareResult:
    """`canter bench sb3`: Canter PPO and Gymnasium + SB3 PPO trained for the same minutes on
    Gymnasium's ant.xml. canter and sb3: frames/s, wall time, frames, eval return, the curve."""

    minutes: float
    model_path: str
    raw_batch_steps_per_s: float  # random controls, before training
    canter: dict[str, Any]
    sb3: dict[str, Any] | None  # None: Canter's side alone
    speedup_frames: float | None
    canter_fraction_of_raw: float
    # against the raw ceiling measured after training: random controls, and the trained ant's states
    canter_fraction_of_raw_end_random: float
    canter_fraction_of_raw_policy_states: float
    machine: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def run_sb3_compare(
    minutes: float, canter_envs: int, sb3_envs: int, seed: int, eval_episodes: int, log: Any = print,
    sb3: bool = True, train_argv: list[str] | None = None,
) -> Sb3CompareResult:
    model_path = gymnasium_ant_xml()
    seconds = 60.0 * minutes
    args = canter_train_args(model_path, canter_envs, seed, train_argv)
    log(f"raw mujoco.batch.Batch on {model_path.name}, {canter_envs} envs ...")
    raw = raw_batch_fps(model_path, canter_envs)
    log(f"Canter PPO (ant-classic on {model_path.name}, {canter_envs} envs) for {seconds:.0f} s ...")
    canter = train_canter(args, model_path, seconds, eval_episodes)
    other = None
    if sb3:
        log(f"Stable-Baselines3 PPO (Gymnasium Ant-v5, {sb3_envs} envs, defaults) for {seconds:.0f} s ...")
        other = train_sb3(seconds, sb3_envs, seed, eval_episodes)
    fps = canter["frames_per_s"]
    return Sb3CompareResult(
        minutes=minutes, model_path=str(model_path), raw_batch_steps_per_s=raw, canter=canter, sb3=other,
        speedup_frames=None if other is None else fps / other["frames_per_s"], canter_fraction_of_raw=fps / raw,
        canter_fraction_of_raw_end_random=fps / canter["raw_end_random_controls_steps_per_s"],
        canter_fraction_of_raw_policy_states=fps / canter["raw_end_policy_states_steps_per_s"], machine=machine_info())


def plot_compare(result: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for name, label in (("canter", "Canter PPO (1 process)"), ("sb3", "SB3 PPO + Gymnasium")):
        if result[name] is None:
            continue
        curve = result[name]["curve"]
        if curve:
            ax.plot([c[0] for c in curve], [c[1] for c in curve], label=label)
    ax.set(
        xlabel="wall time (s)",
        ylabel="mean training episode return",
        title=f"Ant ({Path(result['model_path']).name}), same CPU",
    )
    ax.grid(alpha=0.3)
    ax.legend()
    save_figure(fig, path, dpi=100)
