"""`canter bench train --raw-every K`: raw Batch beside the training. What it replays is exactly the
physics an iteration stepped, the training it interrupts goes on bit for bit, and the report's
ratios are the windows' arithmetic."""

from __future__ import annotations

import json

import pytest
import torch

from canter.bench.env import StateRecorder, replay_seconds
from canter.bench.report import Spread
from canter.bench.train import TrainBenchResult, _raw_window, run_train_bench
from canter.core.errors import ConfigError
from canter.sim.cpu import CpuSimulator
from tests.rl.test_runner import _cartpole_runner


def _params(runner) -> list[torch.Tensor]:
    return [p.detach().clone() for p in runner.algorithm.policy.parameters()]


def test_raw_bursts_replay_the_iteration_physics_and_leave_training_bitwise_unchanged(tmp_path):
    # dog-flat: contacts, pushes (interval events) and resets in an 8-step rollout of 16 envs
    plain = _cartpole_runner(tmp_path / "plain", task="dog-flat")
    measured = _cartpole_runner(tmp_path / "measured", task="dog-flat")
    sim = measured.env.sim
    assert isinstance(sim, CpuSimulator)
    obs, obs_m = plain.env.reset()[0], measured.env.reset()[0]
    for runner in (plain, measured):
        runner.algorithm.train_mode()
    for _ in range(3):
        obs, _ = plain.run_iteration(obs, None)
        qpos_before = measured.env.sim.qpos.clone()
        with StateRecorder(sim) as recorder:
            obs_m, _ = measured.run_iteration(obs_m, None)
        # one state per physics call: 8 env steps of one call each (dog-flat has no controller substeps)
        assert len(recorder.states) == 8 and recorder.nsteps == [measured.env.cfg.decimation] * 8
        # the first recorded state is the one the iteration began from (its controls just written)
        assert torch.equal(torch.from_numpy(recorder.states[0][:, 1:1 + sim.qpos.shape[1]]), qpos_before)
        after = sim.batch.state.copy()
        # raw Batch from the last recorded state lands where the iteration's last physics call landed
        # (its positions: the envs that did not start over after that step)
        rows = sim.batch.state
        rows[...] = recorder.states[-1]
        sim.batch.step(nstep=recorder.nsteps[-1])
        went_on = (measured.env.episode_length_buf > 0).numpy()
        nq = sim.qpos.shape[1]
        assert went_on.sum() >= 8 and (rows[went_on, 1:1 + nq] == after[went_on, 1:1 + nq]).all()
        rows[...] = after
        # the whole replay, timed; the env's state and warnings are put back
        sim._warning_numbers[0, 0] = 3
        for count in (2, 8):  # two states end elsewhere than the iteration did; all eight end near it
            assert replay_seconds(sim, recorder.states[:count], recorder.nsteps[:count]) > 0
            assert (sim.batch.state == after).all() and sim._warning_numbers[0, 0] == 3
        sim._warning_numbers[0, 0] = 0
    for a, b in zip(_params(plain), _params(measured), strict=True):
        assert torch.equal(a, b)
    assert all(torch.equal(obs[group], obs_m[group]) for group in obs)
    assert torch.equal(plain.env.sim.qpos, measured.env.sim.qpos)


def test_raw_window_arithmetic():
    rows = [{"iteration_time_s": 1.0, "phase/physics": 0.6}, {"iteration_time_s": 3.0, "phase/physics": 0.9}]
    window = _raw_window(rows, raw_seconds=0.5, steps_per_iteration=1000)
    # 2,000 steps in 4 s of training; raw: one iteration's 1,000 steps in 0.5 s
    assert window == {"iterations": 2.0, "total_fps": 500.0, "raw_env_states_fps": 2000.0, "total_over_raw": 0.25,
                      "physics_over_raw": 1.8}


def test_bench_train_raw_every_reports_windows(tmp_path):
    result = run_train_bench("cartpole", 0.01, ["--num-envs", "32"], raw_every=2, min_iterations=6)
    windows = result.raw_windows
    # a window after iterations 2 and 4 (0-based): the warm-up iteration 0 belongs to none
    assert result.iterations == 6 and len(windows) == 2
    assert all(w["iterations"] == 2.0 for w in windows)
    assert result.total_over_raw is not None and result.raw_env_states_fps is not None
    assert result.total_over_raw == Spread.of([w["total_over_raw"] for w in windows])
    assert result.raw_env_states_fps == Spread.of([w["raw_env_states_fps"] for w in windows])
    assert 0 < result.total_over_raw.min <= result.total_over_raw.max < 5
    data = result.to_json()
    assert data["raw_every"] == 2 and "total_over_raw_min" in data and len(data["raw_windows"]) == len(windows)
    back = TrainBenchResult.from_json(json.loads(json.dumps(data)))
    assert back.total_over_raw == result.total_over_raw and back.raw_windows == windows
    # off (the default): no raw keys at all, and old reports still read
    plain = run_train_bench("cartpole", 0.5, ["--num-envs", "32"]).to_json()
    assert "total_over_raw" not in plain and plain["raw_every"] == 0
    assert TrainBenchResult.from_json(plain).total_over_raw is None


def test_bench_train_raw_every_refuses_what_it_cannot_measure():
    with pytest.raises(ConfigError, match="--raw-every: must be >= 0"):
        run_train_bench("cartpole", 1.0, ["--num-envs", "8"], raw_every=-1)
    with pytest.raises(ConfigError, match=r"--raw-every: needs the cpu backend.s mujoco\.batch\.Batch, not --backend warp"):
        run_train_bench("cartpole", 1.0, ["--num-envs", "8", "--backend", "warp"], raw_every=1)


def test_bench_train_prints_its_tables(capsys):
    from canter.cli.main import main

    assert main(["bench", "train", "cartpole", "--num-envs", "32", "--max-time", "0.01", "--raw-every", "1"]) == 0
    out = capsys.readouterr().out
    for part in ("train cartpole: 32 envs on 1 process(es)", "total_fps", "where an iteration goes", "physics",
                 "ms per gradient step", "raw mujoco.batch.Batch beside the training", "total_over_raw",
                 "mean return at the end"):
        assert part in out, part


def _signal_at_call(monkeypatch, call: int, signum: int) -> None:
    """The process sends itself `signum` as iteration number `call` (0-based) of the bench begins."""
    import os

    from canter.rl.runner import OnPolicyRunner

    original, calls = OnPolicyRunner.run_iteration, []

    def run_iteration(self, obs, logger=None, should_stop=None):
        if len(calls) == call:
            os.kill(os.getpid(), signum)
        calls.append(call)
        return original(self, obs, logger, should_stop)

    monkeypatch.setattr(OnPolicyRunner, "run_iteration", run_iteration)


def test_a_stop_signal_ends_bench_train_after_the_iteration_with_the_figures_so_far(monkeypatch, tmp_path, capfd):
    import signal

    from canter.core.errors import Interrupted
    from tests.cli.test_train import _in_process

    before = signal.getsignal(signal.SIGINT)
    _signal_at_call(monkeypatch, 2, signal.SIGINT)
    result = run_train_bench("cartpole", 600.0, ["--num-envs", "16"])  # only the signal ends it
    assert result.stopped_by == "SIGINT" and result.iterations == 3  # the iteration under way finished
    assert result.total_fps.median > 0 and TrainBenchResult.from_json(result.to_json()).stopped_by == "SIGINT"
    assert signal.getsignal(signal.SIGINT) is before  # the handler is put back
    _signal_at_call(monkeypatch, 0, signal.SIGTERM)  # during the warm-up iteration: nothing to report
    with pytest.raises(Interrupted) as stop:
        run_train_bench("cartpole", 600.0, ["--num-envs", "16"])
    assert stop.value.signum == signal.SIGTERM and str(stop.value) == "interrupted by SIGTERM"
    # the command: the report is written, then exit 128 + the signal
    _signal_at_call(monkeypatch, 2, signal.SIGTERM)
    done = _in_process(capfd, "bench", "train", "cartpole", "--num-envs", "16", "--max-time", "600", "--out", str(tmp_path))
    assert done.returncode == 128 + signal.SIGTERM and "stopped by SIGTERM after 3 iterations" in done.stderr
    report = json.loads((tmp_path / "train.json").read_text())
    assert report["stopped_by"] == "SIGTERM" and report["iterations"] == 3
    _signal_at_call(monkeypatch, 0, signal.SIGTERM)
    done = _in_process(capfd, "bench", "train", "cartpole", "--num-envs", "16", "--max-time", "600")
    assert done.returncode == 128 + signal.SIGTERM and done.stderr.strip().endswith("canter: interrupted by SIGTERM")
