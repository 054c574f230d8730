"""GA3C against synchronous A2C on one task, one after the other for the same wall time on the same
machine: predictions/s (PPS: agent steps served), trainings/s (TPS: updates), score against wall time,
GA3C's policy lag and the predictor/trainer counts its balancer chose (canter.rl.ga3c).

Both learn with the task's agent config (its policy network and learning settings; algo a2c for the
synchronous side) on the same total number of envs: GA3C splits them into `num_agents` batches, one
agent thread each, and gives each batch's physics or emulators cores / num_agents threads.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import signal
import tempfile
import time
from pathlib import Path
from typing import Any

from canter.core.errors import ConfigError, Interrupted
from canter.core.files import save_figure


def run_ga3c(task: str, train_argv: list[str], seconds: float, num_agents: int, dynamic: bool = True,
             log: Any = None) -> dict[str, Any]:
    """GA3C on `task` for `seconds`; its period statistics as dicts."""
    from canter.runs.args import parse_train_args
    from canter.runs.ga3c import build_ga3c, stop_on_signals

    args = parse_train_args(task, [*train_argv, "--quiet"])
    args.agent.algo.ga3c.num_agents = num_agents
    args.agent.algo.ga3c.dynamic = dynamic
    if args.env.num_envs % num_agents:
        raise ConfigError(f"--num-agents: {args.env.num_envs} envs cannot be split evenly over {num_agents} agents")
    runner = build_ga3c(args, on_period=(
        lambda s: log(f"ga3c {s.wall_time_s:6.0f} s  return {s.mean_return:8.2f}  PPS {s.pps:8.0f}  TPS {s.tps:6.2f}  "
                      f"lag {s.policy_lag:5.2f}  predictors {s.predictors} trainers {s.trainers}")) if log else None)
    with stop_on_signals(runner) as received:  # Ctrl-C or SIGTERM: learn returns within a fraction of a second
        history = runner.learn(seconds)
    for env in runner.envs:
        env.close()
    return {"periods": [dataclasses.asdict(s) for s in history], "num_agents": num_agents,
            "num_envs": args.env.num_envs, "num_steps_per_env": args.agent.algo.num_steps_per_env,
            "stopped_by": received[0].name if received else None}


def run_sync_a2c(task: str, train_argv: list[str], seconds: float, log: Any = None) -> dict[str, Any]:
    """Synchronous A2C (canter's runner, algo a2c) on `task` for `seconds`; per-iteration statistics."""
    from canter.rl.runner import OnPolicyRunner
    from canter.runs.args import cpu_physics, make_env, parse_train_args

    args = parse_train_args(task, [*train_argv, "--algo", "a2c", "--quiet"])
    env = make_env(args)
    rows: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        runner = OnPolicyRunner(env, args.agent, Path(tmp), seed=args.seed, cpu_physics=cpu_physics(args), task=task)
        obs = env.reset()[0]
        runner.algorithm.train_mode()
        start = time.perf_counter()
        next_log = 0.0
        with runner.stop_signals():  # Ctrl-C or SIGTERM: stop after the iteration under way
            while time.perf_counter() - start < seconds and runner.received_signal is None:
                obs, stats = runner.run_iteration(obs, None)
                runner.iteration += 1
                elapsed = time.perf_counter() - start
                rows.append({"wall_time_s": elapsed, "mean_return": stats["mean_return"], "episodes": stats["episodes"],
                             "iteration_time_s": stats["iteration_time_s"], "total_fps": stats["total_fps"]})
                if log and elapsed >= next_log:
                    log(f"a2c  {elapsed:6.0f} s  return {stats['mean_return']:8.2f}  PPS {stats['total_fps']:8.0f}  "
                        f"TPS {1.0 / stats['iteration_time_s']:6.2f}")
                    next_log = elapsed + 10.0
            stopped = runner.received_signal
    env.close()
    return {"iterations": rows, "num_envs": args.env.num_envs, "num_steps_per_env": args.agent.algo.num_steps_per_env,
            "stopped_by": stopped.name if stopped is not None else None}


def summarize(ga3c: dict[str, Any], a2c: dict[str, Any]) -> dict[str, Any]:
    """Each side's PPS and TPS over the run (its agent steps and updates after the first period or
    iteration, a warm-up, over the wall time they took), their per-period medians (`*_median`: the
    figure of earlier reports, which overstates GA3C, whose periods are short and uneven), GA3C's
    median policy lag, each side's last-third mean score, and where GA3C's threads spent the run
    (`ga3c_threads`: thread_activity)."""
    def median(values: list[float]) -> float:
        values = sorted(v for v in values if math.isfinite(v))
        return values[len(values) // 2] if values else float("nan")

    def rate(times: list[float], totals: list[float]) -> float:
        """(totals[-1] - totals[0]) / (times[-1] - times[0]): the rate after the first row (a
        warm-up); over the first row alone where there is only one."""
        if not times:
            return float("nan")
        if len(times) == 1:
            return totals[0] / times[0] if times[0] > 0 else float("nan")
        return (totals[-1] - totals[0]) / (times[-1] - times[0])

    def late_mean(points: list[tuple[float, float, float]]) -> float:
        """Episode-weighted mean return over the last third of the wall time."""
        if not points:
            return float("nan")
        end = points[-1][0]
        late = [(r, n) for t, r, n in points if t >= 2 * end / 3 and n > 0 and math.isfinite(r)]
        total = sum(n for _, n in late)
        return sum(r * n for r, n in late) / total if total else float("nan")

    periods, iterations = ga3c["periods"], a2c["iterations"]
    ga3c_times = [p["wall_time_s"] for p in periods]
    a2c_times = [r["wall_time_s"] for r in iterations]
    a2c_batch = a2c.get("num_envs", 0) * a2c.get("num_steps_per_env", 0)
    return {
        "ga3c_pps": rate(ga3c_times, [p["env_steps"] for p in periods]),
        "ga3c_tps": rate(ga3c_times, [p["updates"] for p in periods]),
        "a2c_pps": rate(a2c_times, [a2c_batch * (i + 1) for i in range(len(iterations))]),
        "a2c_tps": rate(a2c_times, [i + 1 for i in range(len(iterations))]),
        "ga3c_pps_median": median([p["pps"] for p in periods[1:]] or [p["pps"] for p in periods]),
        "ga3c_tps_median": median([p["tps"] for p in periods[1:]] or [p["tps"] for p in periods]),
        "a2c_pps_median": median([r["total_fps"] for r in iterations]),
        "a2c_tps_median": median([1.0 / r["iteration_time_s"] for r in iterations]),
        "ga3c_policy_lag": median([p["policy_lag"] for p in periods[1:]] or [p["policy_lag"] for p in periods]),
        "ga3c_late_return": late_mean([(p["wall_time_s"], p["mean_return"], p["episodes"]) for p in periods]),
        "a2c_late_return": late_mean([(r["wall_time_s"], r["mean_return"], r["episodes"]) for r in iterations]),
        "ga3c_threads": thread_activity(periods),
    }


def thread_activity(periods: list[dict[str, Any]]) -> dict[str, float]:
    """GA3C's threads busy in each activity (canter.rl.ga3c.THREAD_ACTIVITIES) on average over the
    run after its first period (a warm-up), each period weighted by its length; {} without periods
    that measured it."""
    rows = [(b["wall_time_s"] - a["wall_time_s"], b.get("activity", {})) for a, b in itertools.pairwise(periods)]
    rows = [(span, activity) for span, activity in rows if activity and span > 0]
    total = sum(span for span, _ in rows)
    if not total:
        return {}
    return {name: sum(span * activity.get(name, 0.0) for span, activity in rows) / total for name in rows[0][1]}


def windowed(rows: list[dict[str, Any]], seconds: float, steps: list[float], updates: list[float],
             count: int = 20) -> list[dict[str, float]]:
    """`rows` (GA3C periods or A2C iterations, by wall_time_s) in `count` windows of seconds / count
    (a row after the last window's end counts in it): per window its middle, the episode-weighted
    mean return of the episodes that ended in it (nan where none did), and agent steps and updates
    per second. steps[i] and updates[i] are row i's own (not cumulative) counts."""
    width = seconds / count
    sums = [{"games": 0.0, "return": 0.0, "steps": 0.0, "updates": 0.0, "end": (k + 1) * width} for k in range(count)]
    for row, row_steps, row_updates in zip(rows, steps, updates, strict=True):
        window = sums[min(int(row["wall_time_s"] // width), count - 1)]
        window["end"] = max(window["end"], row["wall_time_s"])
        if row["episodes"] > 0 and math.isfinite(row["mean_return"]):
            window["games"] += row["episodes"]
            window["return"] += row["mean_return"] * row["episodes"]
        window["steps"] += row_steps
        window["updates"] += row_updates
    out = []
    for k, window in enumerate(sums):
        span = window["end"] - k * width
        out.append({"wall_time_s": (k + 0.5) * width, "games": window["games"],
                    "mean_return": window["return"] / window["games"] if window["games"] else math.nan,
                    "steps_per_s": window["steps"] / span, "updates_per_s": window["updates"] / span})
    return out


def side_windows(ga3c: dict[str, Any], a2c: dict[str, Any], seconds: float, count: int = 20) -> dict[str, list]:
    """windowed() of each side that ran: GA3C's periods (their env_steps and updates are running
    totals) and A2C's iterations (num_envs x num_steps_per_env steps and one update each)."""
    sides: dict[str, list] = {}
    periods = ga3c["periods"]
    if periods:
        totals = [(0, 0)] + [(p["env_steps"], p["updates"]) for p in periods]
        steps, updates = zip(*((b[0] - a[0], b[1] - a[1]) for a, b in itertools.pairwise(totals)), strict=True)
        sides["GA3C"] = windowed(periods, seconds, list(steps), list(updates), count)
    iterations = a2c["iterations"]
    if iterations:
        per_iteration = a2c["num_envs"] * a2c["num_steps_per_env"]
        sides["A2C (sync)"] = windowed(iterations, seconds, [per_iteration] * len(iterations),
                                       [1] * len(iterations), count)
    return sides


def plot(ga3c: dict[str, Any], a2c: dict[str, Any], task: str, path: Path, seconds: float) -> None:
    """Score, agent steps/s and updates/s of both sides against wall time, each over twenty windows
    of the run (fewer where GA3C had under three periods per window; a long run's per-period values
    are too noisy to read), and where GA3C's threads were in each period (stacked), as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    activity = [p for p in ga3c["periods"] if p.get("activity")]
    fig, axes = plt.subplots(1, 4 if activity else 3, figsize=(20 if activity else 15, 4))
    # at least three GA3C periods per window: a window of one or two periods aliases their rates
    count = min(20, max(1, len(ga3c["periods"]) // 3)) if ga3c["periods"] else 20
    for (name, windows), marker in zip(side_windows(ga3c, a2c, seconds, count).items(), ("o-", "s-"), strict=False):
        minutes = [w["wall_time_s"] / 60.0 for w in windows]
        axes[0].plot(minutes, [w["mean_return"] for w in windows], marker, label=name)
        axes[1].plot(minutes, [w["steps_per_s"] for w in windows], marker, label=name)
        axes[2].plot(minutes, [w["updates_per_s"] for w in windows], marker, label=name)
    axes[0].set(xlabel="wall time (min)", ylabel="mean return of the episodes that ended", title=f"{task}: score")
    axes[1].set(xlabel="wall time (min)", ylabel="agent steps/s (PPS)", title="agent steps per second")
    axes[2].set(xlabel="wall time (min)", ylabel="updates/s (TPS)", title="updates per second")
    for axis in axes[:3]:
        axis.grid(alpha=0.3)
        axis.legend()
    axes[1].set_ylim(bottom=0)
    axes[2].set_ylim(bottom=0)
    if activity:  # where GA3C's threads were, period by period (THREAD_ACTIVITIES), stacked
        names = list(activity[0]["activity"])
        axes[3].stackplot([p["wall_time_s"] / 60.0 for p in activity],
                          [[p["activity"].get(name, 0.0) for p in activity] for name in names],
                          labels=[name.replace("_", " ") for name in names], step="pre")
        axes[3].set(xlabel="wall time (min)", ylabel="threads (average over the period)",
                    title="GA3C: where its threads are")
        axes[3].grid(alpha=0.3)
        axes[3].legend(fontsize=6, loc="upper left", ncol=2)
    save_figure(fig, path, dpi=110)


def fixed_rate_argv(task: str, train_argv: list[str]) -> list[str]:
    """`train_argv` with a task's linear learning-rate default (Atari's PPO) turned off, for GA3C and
    the A2C it is compared with alike (GA3C has no schedule); a schedule the user gave is kept."""
    from canter.runs.args import parse_train_args, sets_schedule

    if sets_schedule(train_argv):
        return train_argv
    if parse_train_args(task, [*train_argv, "--quiet"]).agent.algo.schedule != "linear":
        return train_argv
    return ["--agent.algo.schedule", "fixed", *train_argv]


def run_a2c_and_ga3c(task: str, train_argv: list[str], seconds: float, num_agents: int, dynamic: bool = True,
                     a2c: bool = True, log: Any = None) -> dict[str, Any]:
    """GA3C then (if `a2c`) synchronous A2C, each for `seconds`; both results and their summary. A stop
    signal ends the side under way (A2C does not start after a stopped GA3C); "stopped_by" names it,
    and the figures cover what ran. Interrupted where GA3C had not finished one period."""
    train_argv = fixed_rate_argv(task, train_argv)
    ga3c = run_ga3c(task, train_argv, seconds, num_agents, dynamic, log)
    if ga3c["stopped_by"] is not None and not ga3c["periods"]:
        raise Interrupted(int(signal.Signals[ga3c["stopped_by"]]))
    run_a2c = a2c and ga3c["stopped_by"] is None
    sync = run_sync_a2c(task, train_argv, seconds, log) if run_a2c else {"iterations": [], "stopped_by": None}
    return {"task": task, "seconds": seconds, "ga3c": ga3c, "a2c": sync, "summary": summarize(ga3c, sync),
            "stopped_by": ga3c["stopped_by"] or sync["stopped_by"]}
