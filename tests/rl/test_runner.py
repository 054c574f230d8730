"""The runner through `canter train`: bitwise determinism, exact resume, atomic checkpoints, eval."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from canter.cli.train_cmd import eval_main, train_main
from canter.core.errors import CanterError
from canter.rl.checkpoint import load_checkpoint

SMALL = ["--num-envs", "64", "--quiet", "--agent.save-interval", "100"]


def _train(run_dir: Path, *extra: str) -> dict:
    assert train_main(["cartpole", "--run-dir", str(run_dir), *SMALL, *extra]) == 0
    return load_checkpoint(run_dir / "checkpoint.pt")


def _flatten(tree, prefix=""):
    if isinstance(tree, torch.Tensor):
        yield prefix, tree
    elif isinstance(tree, dict):
        for key, value in tree.items():
            yield from _flatten(value, f"{prefix}/{key}")
    elif isinstance(tree, (list, tuple)):
        for index, value in enumerate(tree):
            yield from _flatten(value, f"{prefix}/{index}")


def _same(a: dict, b: dict) -> bool:
    ta, tb = dict(_flatten(a["algorithm"])), dict(_flatten(b["algorithm"]))
    ea, eb = dict(_flatten(a["env"])), dict(_flatten(b["env"]))
    return ta.keys() == tb.keys() and all(torch.equal(ta[k], tb[k]) for k in ta) and all(torch.equal(ea[k], eb[k]) for k in ea)


def test_same_seed_same_checkpoint_different_seed_differs(tmp_path):
    a = _train(tmp_path / "a", "--max-iterations", "3", "--seed", "1")
    b = _train(tmp_path / "b", "--max-iterations", "3", "--seed", "1")
    c = _train(tmp_path / "c", "--max-iterations", "3", "--seed", "2")
    assert _same(a, b)
    assert not _same(a, c)


def test_resume_is_bitwise_identical_to_an_uninterrupted_run(tmp_path):
    straight = _train(tmp_path / "straight", "--max-iterations", "4")
    _train(tmp_path / "split", "--max-iterations", "2")
    assert train_main(["cartpole", "--resume", str(tmp_path / "split"), "--max-iterations", "4"]) == 0
    resumed = load_checkpoint(tmp_path / "split" / "checkpoint.pt")
    assert resumed["iteration"] == straight["iteration"] == 4
    assert _same(straight, resumed)
    assert len(resumed["history"]) == 4


LINEAR = ["--agent.algo.schedule", "linear", "--agent.algo.learning-rate", "1e-3", "--agent.algo.min-learning-rate",
          "1e-4"]


def _learning_rates(run_dir: Path) -> list[float]:
    rows = (run_dir / "progress.csv").read_text().splitlines()
    column = rows[0].split(",").index("learning_rate")
    return [float(row.split(",")[column]) for row in rows[1:]]


def test_linear_schedule_anneals_over_the_budget_and_a_resume_follows_its_new_budget(tmp_path):
    straight = _train(tmp_path / "straight", "--max-iterations", "4", *LINEAR)
    # the 4 updates used 1e-3 ... 3.25e-4; the next would use the final rate
    assert _learning_rates(tmp_path / "straight") == pytest.approx([1e-3, 7.75e-4, 5.5e-4, 3.25e-4])
    assert float(straight["algorithm"]["learning_rate"]) == pytest.approx(1e-4)
    half = _train(tmp_path / "split", "--max-iterations", "2", *LINEAR)
    assert float(half["algorithm"]["learning_rate"]) == pytest.approx(1e-4)
    # resumed with a budget of 4: the checkpoint's rate first, then the schedule at 3/4 of the new budget
    assert train_main(["cartpole", "--resume", str(tmp_path / "split"), "--max-iterations", "4"]) == 0
    assert _learning_rates(tmp_path / "split") == pytest.approx([1e-3, 5.5e-4, 1e-4, 3.25e-4])


def test_linear_schedule_spends_the_larger_of_the_iteration_and_time_budgets():
    from types import SimpleNamespace

    from canter.rl.config import AlgoCfg
    from canter.rl.runner import OnPolicyRunner, RunnerCfg

    cfg = RunnerCfg(algo=AlgoCfg(schedule="linear", learning_rate=1e-3, min_learning_rate=0.0),
                    max_iterations=100, max_time_s=60.0)
    view = SimpleNamespace(cfg=cfg)
    assert OnPolicyRunner.annealed_learning_rate(view, 10, 3.0) == pytest.approx(0.9e-3)  # type: ignore[arg-type]
    assert OnPolicyRunner.annealed_learning_rate(view, 10, 30.0) == pytest.approx(0.5e-3)  # type: ignore[arg-type]
    assert OnPolicyRunner.annealed_learning_rate(view, 10, 600.0) == 0.0  # type: ignore[arg-type]


def test_run_dir_holds_config_curves_and_events(tmp_path):
    _train(tmp_path / "run", "--max-iterations", "2")
    files = {p.name for p in (tmp_path / "run").iterdir()}
    assert {"command.json", "config.yaml", "checkpoint.pt", "progress.csv", "training_curve.png"} <= files
    assert any(name.startswith("events.out.tfevents") for name in files)


def test_corrupt_or_missing_checkpoint_is_a_clear_error(tmp_path):
    (tmp_path / "bad.pt").write_bytes(b"not a checkpoint")
    with pytest.raises(CanterError, match="corrupt checkpoint"):
        load_checkpoint(tmp_path / "bad.pt")
    with pytest.raises(CanterError, match="no checkpoint"):
        load_checkpoint(tmp_path / "none.pt")
    with pytest.raises(CanterError, match="not a Canter run directory"):
        eval_main([str(tmp_path)])
    with pytest.raises(CanterError, match="exists and is not empty"):
        train_main(["cartpole", "--run-dir", str(tmp_path), *SMALL])


def test_eval_json_reports_returns_and_max_return(tmp_path, capsys):
    _train(tmp_path / "run", "--max-iterations", "2")
    capsys.readouterr()
    assert eval_main([str(tmp_path / "run"), "--episodes", "8", "--num-envs", "8", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["episodes"] == 8 and result["max_return"] == 5.0
    assert result["mean_return"] <= result["max_return"] and result["mean_episode_length"] > 0


@pytest.mark.slow
def test_cartpole_learns(tmp_path, capsys):
    """PPO with the task's defaults reaches 90% of the best possible return within 60 iterations."""
    assert train_main(["cartpole", "--run-dir", str(tmp_path / "run"), "--quiet", "--max-iterations", "60"]) == 0
    capsys.readouterr()
    assert eval_main([str(tmp_path / "run"), "--episodes", "64", "--num-envs", "64", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["mean_return"] >= 0.9 * result["max_return"]


@pytest.mark.parametrize("extra", [("--algo", "a2c"), ("--agent.policy.rnn-type", "gru", "--agent.policy.rnn-hidden-dim", "32"), ("--agent.policy.rnn-type", "lstm", "--agent.policy.rnn-hidden-dim", "32"),
                                   ("--agent.algo.autocast", "bf16")])
def test_other_algorithms_recurrent_policies_and_the_bf16_update_train_and_resume_exactly(tmp_path, extra):
    straight = _train(tmp_path / "straight", "--max-iterations", "3", *extra)
    _train(tmp_path / "split", "--max-iterations", "2", *extra)
    assert train_main(["cartpole", "--resume", str(tmp_path / "split"), "--max-iterations", "3"]) == 0
    assert _same(straight, load_checkpoint(tmp_path / "split" / "checkpoint.pt"))
    assert straight["algorithm"]["algo"] == ("a2c" if "a2c" in extra else "ppo")


def test_play_writes_a_video(tmp_path):
    import subprocess
    import sys

    _train(tmp_path / "run", "--max-iterations", "1")
    code = "from canter.cli.main import entrypoint; entrypoint()"
    video, strip = tmp_path / "play.mp4", tmp_path / "strip.png"
    result = subprocess.run(
        [sys.executable, "-c", code, "play", str(tmp_path / "run"), "--num-envs", "2", "--steps", "30", "--video", str(video),
         "--width", "160", "--height", "120", "--strip", str(strip)],
        capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert video.stat().st_size > 1000
    import imageio.v2 as imageio

    frames = imageio.mimread(str(video))
    assert len(frames) == 30 and frames[0].shape == (120, 160, 3)
    # the strip: frames 0, 3, 6, ..., 21 (every 30 // 8 = 3rd, 8 of them) with 4 px gaps
    image = imageio.imread(str(strip))
    assert image.shape == (120, 8 * 160 + 7 * 4, 3)
    # the video is lossy (h264), the strip is not: the second panel is frame 3 up to compression
    assert np.abs(image[:, 164 : 164 + 160].astype(float) - frames[3]).mean() < 8.0
    assert (image[:, 160:164] == 255).all()


def _scalars(run_dir: Path, prefix: str) -> dict[str, list[tuple[int, float]]]:
    """TensorBoard scalars whose tag starts with `prefix`: tag -> [(iteration, value)], over every
    event file of the run (a resumed run writes one per session)."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    out: dict[str, list[tuple[int, float]]] = {}
    for path in sorted(run_dir.glob("events.out.tfevents.*")):
        events = EventAccumulator(str(path))
        events.Reload()
        for tag in events.Tags()["scalars"]:
            if tag.startswith(prefix):
                out.setdefault(tag, []).extend((e.step, e.value) for e in events.Scalars(tag))
    return out


def test_startup_randomization_reaches_tensorboard(tmp_path):
    import io

    from rich.console import Console

    from canter import mdp
    from canter.envs.manager_env import ManagerBasedRLEnv
    from canter.managers.event import EventTermCfg
    from canter.mdp.randomization import randomization_summary
    from canter.rl.logger import Logger
    from canter.rl.runner import OnPolicyRunner
    from canter.scene.entity import bodies
    from canter.tasks import REGISTRY

    spec = REGISTRY.get("cartpole")
    cfg = spec.env_cfg()
    cfg.num_envs = 16
    cfg.events["pole_mass"] = EventTermCfg(
        func=mdp.randomize_added_mass, mode="startup", params={"bodies": bodies("pole"), "mass_range": (0.1, 0.5)}
    )
    env = ManagerBasedRLEnv(cfg)
    summary = randomization_summary("added_mass", env.randomization_state["added_mass"])
    agent = spec.agent_cfg()
    agent.max_iterations, agent.algo.num_steps_per_env = 2, 8
    runner = OnPolicyRunner(env, agent, tmp_path, seed=0, cpu_physics=True)
    logger = Logger(tmp_path, 2, 0, console=Console(file=io.StringIO()))
    runner.learn(logger)
    logger.close(runner.history)
    scalars = _scalars(tmp_path, "Randomization/")
    assert set(scalars) == set(summary)
    for key, value in summary.items():
        assert scalars[key] == [(0, pytest.approx(float(value)))]  # the first iteration's


# 0.1 s episodes (5 steps): envs reset, so reset-mode randomization is drawn and logged every few steps
DR = ["--num-envs", "16", "--quiet", "--agent.save-interval", "100", "--agent.algo.num-steps-per-env", "8", "--env.episode-length-s", "0.1"]


def _straight_and_resumed(task: str, args: list[str], tmp_path: Path) -> dict:
    """`task` trained for 3 iterations in tmp_path/straight and for 2 + 1 (a resume) in tmp_path/split; asserts both
    checkpoints are at iteration 3 and bitwise the same, and returns the straight one."""
    assert train_main([task, "--run-dir", str(tmp_path / "straight"), *args, "--max-iterations", "3"]) == 0
    assert train_main([task, "--run-dir", str(tmp_path / "split"), *args, "--max-iterations", "2"]) == 0
    assert train_main([task, "--resume", str(tmp_path / "split"), "--max-iterations", "3"]) == 0
    straight = load_checkpoint(tmp_path / "straight" / "checkpoint.pt")
    resumed = load_checkpoint(tmp_path / "split" / "checkpoint.pt")
    assert resumed["iteration"] == straight["iteration"] == 3
    assert _same(straight, resumed)
    return straight


def test_domain_randomized_resume_is_bitwise_identical_and_logs_the_same(tmp_path):
    """dog-flat-dr for 2 + 1 iterations against 3: same checkpoint (incl. the randomization state)
    and the same randomization statistics in TensorBoard at the resumed iteration."""
    straight = _straight_and_resumed("dog-flat-dr", DR, tmp_path)
    assert set(straight["env"]["randomization"]) >= {"friction", "added_mass", "action_delay"}
    logged = {tag: dict(values) for tag, values in _scalars(tmp_path / "straight", "Randomization/").items()}
    resumed_logged = {tag: dict(values) for tag, values in _scalars(tmp_path / "split", "Randomization/").items()}
    assert logged and logged.keys() == resumed_logged.keys()
    for tag in logged:
        if 2 in logged[tag]:
            assert resumed_logged[tag][2] == logged[tag][2], tag
    assert any(2 in values for values in logged.values())


def test_dog_rough_resume_with_walk_out_cuts_is_bitwise_identical(tmp_path):
    """dog-rough's default switches on the terrain curriculum, with the walk-out cut at 5 % of the block's half side
    (0.2 m: envs are cut and promoted within the test's few steps), for 2 + 1 iterations against 3: the same
    checkpoint, terrain levels and origins included, and the cut fired."""
    rough = ["--num-envs", "16", "--quiet", "--agent.save-interval", "100", "--agent.algo.num-steps-per-env", "8",
             "--env.terminations.walked-out.params.factor", "0.05"]
    _straight_and_resumed("dog-rough", rough, tmp_path)
    cut = _scalars(tmp_path / "straight", "Episode_Termination/walked_out")
    assert cut and max(value for values in cut.values() for _, value in values) > 0


# --- stopping early, task checks, instability, memory (through the runner, no CLI) ---------------
def _cartpole_runner(run_dir: Path, *, task: str = "cartpole", num_envs: int = 16, max_iterations: int = 1000,
                     save_interval: int = 100, timestep: float | None = None):
    from canter.envs.manager_env import ManagerBasedRLEnv
    from canter.rl.runner import OnPolicyRunner
    from canter.tasks import REGISTRY

    spec = REGISTRY.get(task)
    cfg = spec.env_cfg()
    cfg.num_envs = num_envs
    if timestep is not None:
        cfg.sim.timestep = timestep
    agent = spec.agent_cfg()
    agent.max_iterations, agent.save_interval, agent.algo.num_steps_per_env = max_iterations, save_interval, 8
    return OnPolicyRunner(ManagerBasedRLEnv(cfg), agent, run_dir, seed=0, cpu_physics=True, task=task)


def _quiet_logger(run_dir: Path, total: int, start: int = 0, signals: dict[int, list[int]] | None = None):
    """A Logger printing into a string; signals: iteration -> signals this process sends itself
    while logging that iteration."""
    import io
    import os

    from rich.console import Console

    from canter.rl.logger import Logger

    class SignallingLogger(Logger):
        def log_iteration(self, iteration, scalars, curve):
            super().log_iteration(iteration, scalars, curve)
            for signum in (signals or {}).get(iteration, []):
                os.kill(os.getpid(), signum)

    return SignallingLogger(run_dir, total, start, console=Console(file=io.StringIO(), width=300))


class _Escaped(Exception):
    pass


@pytest.fixture
def no_default_signal_handlers():
    """Signals the runner does not handle raise _Escaped here instead of killing pytest."""
    import signal

    def escape(signum, frame):
        raise _Escaped(signum)

    previous = {s: signal.signal(s, escape) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    yield escape
    for s, handler in previous.items():
        signal.signal(s, handler)


def test_a_stop_signal_finishes_the_iteration_saves_and_resumes_bitwise(tmp_path, no_default_signal_handlers):
    """SIGTERM while logging iteration 1: the runner finishes iteration 2, writes the checkpoint and
    the curves, returns with stop_signal set and gives the handlers back; resuming from there to
    iteration 4 is bitwise the run that was never stopped."""
    import signal

    runner = _cartpole_runner(tmp_path / "split")
    logger = _quiet_logger(tmp_path / "split", 1000, signals={1: [signal.SIGTERM]})
    last = runner.learn(logger)
    assert runner.stop_signal == signal.SIGTERM and last["stop"] == 1.0 and last["stop_signal"] == signal.SIGTERM
    assert runner.iteration == 3  # the stop is agreed at the end of an iteration: the next one
    assert signal.getsignal(signal.SIGTERM) is no_default_signal_handlers
    saved = load_checkpoint(tmp_path / "split" / "checkpoint.pt")
    assert saved["iteration"] == 3 and saved["meta"]["task"] == "cartpole"
    assert len((tmp_path / "split" / "progress.csv").read_text().splitlines()) == 1 + 3  # without close()
    assert (tmp_path / "split" / "training_curve.png").stat().st_size > 0

    stale = tmp_path / "split" / f".checkpoint.pt.{2**22 + 7}.0a1b2c3d.tmp"  # a pid above Linux's pid_max
    stale.write_bytes(b"partial")  # a writer killed mid-write
    resumed = _cartpole_runner(tmp_path / "split", max_iterations=4)
    assert not stale.exists()  # gone at the next start
    resumed.load(tmp_path / "split" / "checkpoint.pt")
    resumed.learn()
    assert resumed.stop_signal is None
    straight = _cartpole_runner(tmp_path / "straight", max_iterations=4)
    straight.learn()
    assert _same(load_checkpoint(tmp_path / "straight" / "checkpoint.pt"), load_checkpoint(tmp_path / "split" / "checkpoint.pt"))


def test_a_second_sigint_stops_at_once_and_keeps_the_last_checkpoint(tmp_path, no_default_signal_handlers):
    import signal

    runner = _cartpole_runner(tmp_path, save_interval=1)
    logger = _quiet_logger(tmp_path, 1000, signals={1: [signal.SIGINT, signal.SIGINT]})
    with pytest.raises(KeyboardInterrupt):
        runner.learn(logger)
    assert signal.getsignal(signal.SIGINT) is no_default_signal_handlers
    assert load_checkpoint(tmp_path / "checkpoint.pt")["iteration"] == 1
    assert [p.name for p in tmp_path.glob(".*.tmp")] == []


def test_sigint_to_canter_train_saves_a_checkpoint_and_the_curves(tmp_path):
    """`canter train` interrupted with Ctrl-C (SIGINT) after it started learning: the iteration under
    way ends, checkpoint.pt and progress.csv are written (the default save interval is 50)."""
    import signal
    import subprocess
    import sys
    import time

    run_dir = tmp_path / "run"
    code = "from canter.cli.main import entrypoint; entrypoint()"
    process = subprocess.Popen([sys.executable, "-c", code, "train", "cartpole", "--num-envs", "16", "--max-iterations",
                                "1000", "--run-dir", str(run_dir), "--quiet"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        while not list(run_dir.glob("events.out.tfevents.*")):  # the logger exists: learning starts
            assert process.poll() is None, process.communicate()[1][-2000:]
            time.sleep(0.1)
        time.sleep(1.0)
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=300)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert "Traceback" not in stderr, stderr[-2000:]
    saved = load_checkpoint(run_dir / "checkpoint.pt")
    assert 1 <= saved["iteration"] < 1000
    assert len((run_dir / "progress.csv").read_text().splitlines()) == 1 + saved["iteration"]


def test_a_checkpoint_of_another_task_is_refused_in_one_line(tmp_path):
    ant = _cartpole_runner(tmp_path / "ant", task="ant", num_envs=4, max_iterations=1)
    ant.learn()
    cartpole = _cartpole_runner(tmp_path / "cartpole", num_envs=4)
    expected = (f"{tmp_path / 'ant' / 'checkpoint.pt'} is for task ant (obs 41, actions 8), "
                f"this run is task cartpole (obs 4, actions 1)")
    with pytest.raises(CanterError) as caught:
        cartpole.load(tmp_path / "ant" / "checkpoint.pt")
    assert str(caught.value) == expected
    with pytest.raises(CanterError) as caught:
        cartpole.load_policy(tmp_path / "ant" / "checkpoint.pt")
    assert str(caught.value) == expected
    old = {"algorithm": load_checkpoint(tmp_path / "ant" / "checkpoint.pt")["algorithm"], "iteration": 1}
    torch.save(old, tmp_path / "old.pt")  # a checkpoint from before the per-rank parts and the metadata
    with pytest.raises(CanterError, match=r"old.pt was written by an older Canter \(it lacks meta, wall_time_s, "):
        cartpole.load(tmp_path / "old.pt")


def test_physics_blow_ups_are_counted_per_iteration_and_reported(tmp_path, capfd):
    """The ant at a 0.5 s timestep: the non-finite resets of each iteration reach the statistics,
    progress.csv and TensorBoard, and one warning line sums them up with MuJoCo's warnings, which
    no longer flood stderr."""
    runner = _cartpole_runner(tmp_path, task="ant", num_envs=8, max_iterations=2, timestep=0.5)
    logger = _quiet_logger(tmp_path, 2)
    last = runner.learn(logger)
    logger.close(runner.history)
    per_iteration = [row["nonfinite_resets"] for row in runner.history]
    assert last["nonfinite_resets"] == per_iteration[-1] and sum(per_iteration) == last["nonfinite_resets_total"] > 0
    assert int(runner.env.sim.nonfinite_total) == last["nonfinite_resets_total"]
    import csv

    with open(tmp_path / "progress.csv") as file:
        assert [float(row["nonfinite_resets"]) for row in csv.DictReader(file)] == per_iteration
    assert [value for _, value in _scalars(tmp_path, "Train/nonfinite_resets_total")["Train/nonfinite_resets_total"]] == [
        sum(per_iteration[: i + 1]) for i in range(2)]
    printed = logger.console.file.getvalue()
    assert printed.count("warning:") == 1  # at most one line per 10 iterations
    assert "physics blew up" in printed and "MuJoCo warned" in printed and "unstable" in printed
    assert "WARNING" not in capfd.readouterr().err



def test_keep_snapshots_keeps_every_periodic_save_as_it_was(tmp_path):
    """agent.keep_snapshots: snapshots/it<K>.pt at every save_interval, each the checkpoint of that
    iteration (not a link to the newest), the final save of a budget between intervals not kept."""
    runner = _cartpole_runner(tmp_path, max_iterations=5, save_interval=2)
    runner.cfg.keep_snapshots = True
    runner.learn()
    kept = sorted(p.name for p in (tmp_path / "snapshots").iterdir())
    assert kept == ["it2.pt", "it4.pt"]
    first, second = (load_checkpoint(tmp_path / "snapshots" / name) for name in kept)
    assert first["iteration"] == 2 and second["iteration"] == 4
    assert load_checkpoint(tmp_path / "checkpoint.pt")["iteration"] == 5
    a, b = first["algorithm"]["policy"], second["algorithm"]["policy"]
    assert any(not torch.equal(a[k], b[k]) for k in a)  # the policy moved between the two saves
    plain = tmp_path / "plain"
    _cartpole_runner(plain, max_iterations=2, save_interval=1).learn()
    assert not (plain / "snapshots").exists()  # off by default


def test_log_sums_skip_nan_and_merge_steps_with_other_keys():
    from canter.rl.runner import _LogSums

    logs = _LogSums(torch.device("cpu"))
    logs.add({"a": torch.tensor(1.0), "b": torch.tensor(float("nan"))})  # b: no env reset this step
    logs.add({"a": torch.tensor(3.0), "b": torch.tensor(4, dtype=torch.int64)})
    logs.add({"startup": 2.5, "a": torch.tensor(5.0), "b": torch.tensor(6.0)})  # a reset's startup log, once
    logs.add({})
    sums, counts = logs.totals()
    assert {k: float(v) for k, v in sums.items()} == {"a": 9.0, "b": 10.0, "startup": 2.5}
    assert {k: float(v) for k, v in counts.items()} == {"a": 3.0, "b": 2.0, "startup": 1.0}


def test_progress_rows_carry_the_mean_over_the_latest_100_episodes(tmp_path):
    """With 8 envs x 4 steps an iteration ends few cartpole episodes (some none: its mean is nan);
    each row's recent_return is the mean over the latest rows that ended >= 100 episodes, whole rows."""
    import csv
    import math

    from canter.rl.logger import recent_means

    _train(tmp_path / "run", "--max-iterations", "30", "--num-envs", "8", "--agent.algo.num-steps-per-env", "4")
    with open(tmp_path / "run" / "progress.csv") as file:
        rows = [{k: float(v) for k, v in row.items()} for row in csv.DictReader(file)]
    assert len(rows) == 30 and any(math.isnan(row["mean_return"]) for row in rows)  # iterations that ended no episode
    for i, row in enumerate(rows):
        expected = recent_means(rows[: i + 1])
        assert (row["recent_return"], row["recent_episode_length"]) == pytest.approx(expected, nan_ok=True)
        if row["episodes"] > 0 and any(earlier["episodes"] > 0 for earlier in rows[:i]):
            assert row["recent_return"] != row["mean_return"]  # the window spans earlier iterations too
    first = next(i for i, row in enumerate(rows) if row["episodes"] > 0)
    assert all(math.isnan(row["recent_return"]) for row in rows[:first])
    assert all(math.isfinite(row["recent_return"]) for row in rows[first:])  # never nan again, unlike mean_return
    # by hand for the last row: walk back until 100 episodes
    total = episodes = 0.0
    for row in reversed(rows):
        if row["episodes"] > 0:
            total, episodes = total + row["mean_return"] * row["episodes"], episodes + row["episodes"]
        if episodes >= 100:
            break
    assert rows[-1]["recent_return"] == pytest.approx(total / episodes)
