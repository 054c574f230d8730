"""`canter bench ga3c TASK`: GA3C then synchronous A2C for the same wall time, the summary of both,
ga3c.json and ga3c.png, and progress on stderr whether or not stdout is the JSON."""

from __future__ import annotations

import json
import math

import pytest

from canter.bench.ga3c import side_windows, summarize, thread_activity, windowed
from canter.cli.main import main

FAST = ["--num-envs", "16", "--agent.algo.ga3c.adjust-every-s", "0.5", "--agent.algo.num-steps-per-env", "8"]


def test_bench_ga3c_writes_both_sides_and_shows_progress_with_json(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["bench", "ga3c", "cartpole", "--minutes", "0.04", "--num-agents", "2", "--json", "--out", str(out),
                 *FAST]) == 0
    captured = capsys.readouterr()
    result = json.loads(captured.out)  # stdout is the JSON alone
    assert result == json.loads((out / "ga3c.json").read_text())
    assert (out / "ga3c.png").stat().st_size > 0
    summary = result["summary"]
    for side in ("ga3c", "a2c"):
        assert summary[f"{side}_pps"] > 0 and summary[f"{side}_tps"] > 0, side
    assert result["ga3c"]["num_agents"] == 2 and result["ga3c"]["num_envs"] == 16
    threads = summary["ga3c_threads"]  # the two agents' time, all of it accounted for
    assert sum(v for k, v in threads.items() if k.startswith("agent_")) == pytest.approx(2.0, rel=1e-6)
    assert all(math.isfinite(p["wall_time_s"]) for p in result["ga3c"]["periods"])
    # progress lines of both sides went to stderr
    assert "ga3c " in captured.err and "a2c " in captured.err


def _row(t, episodes, mean_return):
    return {"wall_time_s": t, "episodes": episodes, "mean_return": mean_return}


def test_windowed_weights_scores_by_games_and_rates_by_the_window():
    rows = [_row(1.0, 2, -20.0), _row(4.0, 0, math.nan), _row(6.0, 1, -17.0),
            _row(11.0, 3, -19.0)]  # the last row ends after the budget: it counts in the last window
    first, second = windowed(rows, 10.0, steps=[100, 100, 50, 150], updates=[1, 1, 2, 1], count=2)
    assert first == {"wall_time_s": 2.5, "games": 2, "mean_return": -20.0, "steps_per_s": 40.0, "updates_per_s": 0.4}
    assert second["wall_time_s"] == 7.5 and second["games"] == 4
    assert second["mean_return"] == pytest.approx((-17.0 - 3 * 19.0) / 4)  # -18.5, not the mean of -17 and -19
    assert second["steps_per_s"] == pytest.approx(200 / 6) and second["updates_per_s"] == pytest.approx(3 / 6)
    empty = windowed([_row(1.0, 0, math.nan)], 10.0, steps=[5], updates=[1], count=2)
    assert math.isnan(empty[0]["mean_return"]) and empty[1]["steps_per_s"] == 0.0


def test_side_windows_reads_ga3c_totals_and_a2c_iterations():
    periods = [dict(_row(t, n, r), env_steps=steps, updates=updates) for t, n, r, steps, updates in
               [(1.0, 2, -20.0, 100, 1), (4.0, 0, math.nan, 200, 2), (6.0, 1, -17.0, 250, 4), (11.0, 3, -19.0, 400, 5)]]
    iterations = [_row(t, 1, -21.0) for t in (2.0, 3.0, 7.0)]
    sides = side_windows({"periods": periods}, {"iterations": iterations, "num_envs": 4, "num_steps_per_env": 8}, 10.0, 2)
    assert [w["steps_per_s"] for w in sides["GA3C"]] == pytest.approx([40.0, 200 / 6])  # differences of the totals
    assert [w["updates_per_s"] for w in sides["GA3C"]] == pytest.approx([0.4, 0.5])
    assert [w["steps_per_s"] for w in sides["A2C (sync)"]] == pytest.approx([64 / 5, 32 / 5])
    assert [w["updates_per_s"] for w in sides["A2C (sync)"]] == pytest.approx([0.4, 0.2])
    assert list(side_windows({"periods": periods}, {"iterations": []}, 10.0, 2)) == ["GA3C"]  # --no-a2c


def test_summary_rates_are_run_averages_after_the_first_period_not_medians_of_periods():
    # GA3C: uneven periods; the first (1 s, 100 steps) is the warm-up. Per-period PPS 100, 900, 100:
    # the median says 100 or 900, the run moved 1,000 steps in 3 s after its first period.
    periods = [dict(_row(t, 1, -20.0), env_steps=steps, updates=updates, pps=pps, tps=tps, policy_lag=lag)
               for t, steps, updates, pps, tps, lag in
               [(1.0, 100, 1, 100.0, 1.0, 0.0), (2.0, 1000, 3, 900.0, 2.0, 2.0), (4.0, 1100, 4, 50.0, 0.5, 4.0)]]
    iterations = [dict(_row(t, 1, -21.0), total_fps=fps, iteration_time_s=dt)
                  for t, fps, dt in [(2.0, 16.0, 2.0), (3.0, 32.0, 1.0), (5.5, 20.0, 2.5)]]
    summary = summarize({"periods": periods}, {"iterations": iterations, "num_envs": 4, "num_steps_per_env": 8})
    assert summary["ga3c_pps"] == pytest.approx(1000 / 3) and summary["ga3c_tps"] == pytest.approx(3 / 3)
    assert summary["ga3c_pps_median"] == 900.0 and summary["ga3c_tps_median"] == 2.0  # the older figure
    assert summary["ga3c_policy_lag"] == 4.0
    # A2C: 32 steps and one update per iteration, two iterations in the 3.5 s after the first
    assert summary["a2c_pps"] == pytest.approx(64 / 3.5) and summary["a2c_tps"] == pytest.approx(2 / 3.5)
    assert summary["a2c_pps_median"] == 20.0 and summary["a2c_tps_median"] == 0.5
    # one period only: its own rate from the start; a side that did not run: nan
    alone = summarize({"periods": periods[:1]}, {"iterations": []})
    assert alone["ga3c_pps"] == 100.0 and alone["ga3c_tps"] == 1.0
    assert math.isnan(alone["a2c_pps"]) and math.isnan(alone["a2c_tps"]) and math.isnan(alone["a2c_late_return"])


def test_thread_activity_weights_periods_by_their_length_after_the_first():
    periods = [{"wall_time_s": 1.0, "activity": {"agent_env": 9.0, "agent_wait_prediction": 9.0}},  # warm-up
               {"wall_time_s": 2.0, "activity": {"agent_env": 1.0, "agent_wait_prediction": 1.0}},
               {"wall_time_s": 5.0, "activity": {"agent_env": 2.0, "agent_wait_prediction": 0.0}}]
    assert thread_activity(periods) == pytest.approx({"agent_env": (1.0 + 3 * 2.0) / 4, "agent_wait_prediction": 0.25})
    assert thread_activity(periods[:1]) == {} and thread_activity([]) == {}
    assert thread_activity([{"wall_time_s": 1.0}, {"wall_time_s": 2.0}]) == {}  # periods from before the accounting


def test_a_stop_signal_ends_the_side_under_way_and_keeps_what_ran(tmp_path, monkeypatch, capfd):
    import os
    import signal

    from canter.bench.ga3c import run_a2c_and_ga3c
    from tests.bench.test_train_bench import _signal_at_call
    from tests.cli.test_train import _in_process

    lines: list[str] = []

    def log(line: str) -> None:  # Ctrl-C as GA3C reports its second period: A2C does not start
        lines.append(line)
        if len(lines) == 2:
            os.kill(os.getpid(), signal.SIGINT)

    result = run_a2c_and_ga3c("cartpole", FAST, 600.0, 2, log=log)  # only the signal ends it
    assert result["stopped_by"] == result["ga3c"]["stopped_by"] == "SIGINT"
    assert len(result["ga3c"]["periods"]) >= 2 and result["a2c"]["iterations"] == []
    assert result["summary"]["ga3c_pps"] > 0 and math.isnan(result["summary"]["a2c_pps"])
    # SIGTERM in A2C's third iteration: GA3C's side whole, A2C's three iterations, exit 128 + 15
    _signal_at_call(monkeypatch, 2, signal.SIGTERM)
    done = _in_process(capfd, "bench", "ga3c", "cartpole", "--minutes", "0.02", "--num-agents", "2", "--out",
                       str(tmp_path), *FAST)
    assert done.returncode == 128 + signal.SIGTERM and "stopped by SIGTERM" in done.stderr
    report = json.loads((tmp_path / "ga3c.json").read_text())
    assert report["stopped_by"] == report["a2c"]["stopped_by"] == "SIGTERM" and report["ga3c"]["stopped_by"] is None
    assert len(report["a2c"]["iterations"]) == 3 and (tmp_path / "ga3c.png").stat().st_size > 0
