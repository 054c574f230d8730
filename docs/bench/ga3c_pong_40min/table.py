"""BENCHMARKS §16: GA3C against synchronous A2C on Pong, 40 minutes each, from ga3c.json beside this
file, in 5-minute windows (canter.bench.ga3c.side_windows, the windows of ga3c.png at 8 instead of 20):
the mean training score of the whole games that ended in each (unclipped), agent steps/s and
updates/s; then the totals and the policy lag."""
import json
import math
import statistics
from pathlib import Path

from canter.bench.ga3c import side_windows

result = json.loads((Path(__file__).parent / "ga3c.json").read_text())
ga3c, a2c = result["ga3c"], result["a2c"]
count = round(result["seconds"] / 300.0)
sides = side_windows(ga3c, a2c, result["seconds"], count)
print("| minutes | " + " | ".join(f"{5 * k}–{5 * k + 5}" for k in range(count)) + " |")
print("|---|" + "---:|" * count)
for name, windows in sides.items():
    print(f"| {name}: score (games) | " + " | ".join(f"{w['mean_return']:+.1f} ({w['games']:.0f})" for w in windows) + " |")
    print(f"| {name}: agent steps/s | " + " | ".join(f"{w['steps_per_s']:,.0f}" for w in windows) + " |")
    print(f"| {name}: updates/s | " + " | ".join(f"{w['updates_per_s']:.2f}" for w in windows) + " |")
last = ga3c["periods"][-1]
a2c_steps = len(a2c["iterations"]) * a2c["num_envs"] * a2c["num_steps_per_env"]
print(f"GA3C: {4 * last['env_steps'] / 1e6:.1f} M frames, {last['updates']} updates; "
      f"A2C: {4 * a2c_steps / 1e6:.1f} M frames, {len(a2c['iterations'])} updates")
lags = [p["policy_lag"] for p in ga3c["periods"] if math.isfinite(p["policy_lag"])]
print(f"GA3C policy lag: median {statistics.median(lags):.1f} updates (range {min(lags):.1f}-{max(lags):.1f}); "
      f"predictors {sorted({p['predictors'] for p in ga3c['periods']})}, trainers {sorted({p['trainers'] for p in ga3c['periods']})}")
print({k: round(v, 3) for k, v in result["summary"].items()})
