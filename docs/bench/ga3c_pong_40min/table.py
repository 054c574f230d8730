"""BENCHMARKS §16: GA3C against synchronous A2C on Pong, 40 minutes each, from ga3c.json beside this
file: the mean training score over the whole games that ended in each 5-minute window (episode-
weighted, unclipped), agent steps and updates at the end of each window, PPS, TPS and the policy lag."""
import json
import math
import statistics
from pathlib import Path

WINDOW_S = 300.0
result = json.loads((Path(__file__).parent / "ga3c.json").read_text())
seconds = result["seconds"]
windows = [(k * WINDOW_S, (k + 1) * WINDOW_S) for k in range(math.ceil(seconds / WINDOW_S))]


def windowed(rows, step_of):
    """[(score, games, steps at the window's end, updates at its end)] per window."""
    out = []
    for lo, hi in windows:
        inside = [r for r in rows if lo <= r["wall_time_s"] < hi and r["episodes"] > 0 and math.isfinite(r["mean_return"])]
        games = sum(r["episodes"] for r in inside)
        score = sum(r["mean_return"] * r["episodes"] for r in inside) / games if games else float("nan")
        upto = [r for r in rows if r["wall_time_s"] < hi]
        steps, updates = step_of(upto[-1], len(upto)) if upto else (0, 0)
        out.append((score, games, steps, updates))
    return out


ga3c, a2c = result["ga3c"], result["a2c"]
per_iteration = a2c["num_envs"] * a2c["num_steps_per_env"]
sides = {
    "GA3C": windowed(ga3c["periods"], lambda r, n: (r["env_steps"], r["updates"])),
    "A2C": windowed(a2c["iterations"], lambda r, n: (n * per_iteration, n)),
}
print("| minute | " + " | ".join(f"{int(hi // 60)}" for _, hi in windows) + " |")
print("|---|" + "---:|" * len(windows))
for name, rows in sides.items():
    print(f"| {name}: score (games) | " + " | ".join(f"{s:+.1f} ({int(g)})" for s, g, _, _ in rows) + " |")
    print(f"| {name}: frames (M) / updates | " + " | ".join(f"{4 * st / 1e6:.1f} / {u}" for _, _, st, u in rows) + " |")
s = result["summary"]
lags = [p["policy_lag"] for p in ga3c["periods"] if math.isfinite(p["policy_lag"])]
print(f"GA3C PPS {s['ga3c_pps']:.0f} TPS {s['ga3c_tps']:.2f} lag median {statistics.median(lags):.1f} "
      f"(range {min(lags):.1f}-{max(lags):.1f}); predictors {sorted({p['predictors'] for p in ga3c['periods']})} "
      f"trainers {sorted({p['trainers'] for p in ga3c['periods']})}")
print(f"A2C PPS {s['a2c_pps']:.0f} TPS {s['a2c_tps']:.2f}")
print({k: v for k, v in s.items()})
