"""BENCHMARKS §5: prints the tables of ant-classic with 3 learning epochs against 5 from the JSON beside this script
(commands.sh). Usage: python docs/bench/ant_epochs/table.py"""
import json
import statistics
from pathlib import Path

HERE = Path(__file__).parent
STEPS_PER_ITERATION = 256 * 64
MARKS_M = (1.0, 2.0, 3.0, 4.0, 5.0)  # M env steps


def return_at(curve: list, steps: float) -> float:
    """The training return of the iteration that ended at `steps` env steps (curve: one (s, return) per iteration)."""
    return curve[round(steps / STEPS_PER_ITERATION) - 1][1]


print("| run | epochs | raw before / after / on its states | Canter frames/s | / raw before, after, states "
      "| training return at " + " / ".join(f"{m:g}" for m in MARKS_M) + " M steps | eval return, 15 min |")
print("|---|---:|---|---:|---|---|---:|")
for name, epochs, seed in (("e5", 5, 0), ("e3", 3, 0), ("e3_s1", 3, 1), ("e5_s1", 5, 1)):
    d = json.loads((HERE / f"{name}.json").read_text())
    c = d["canter"]
    raw = (d["raw_batch_steps_per_s"], c["raw_end_random_controls_steps_per_s"], c["raw_end_policy_states_steps_per_s"])
    ratios = (d["canter_fraction_of_raw"], d["canter_fraction_of_raw_end_random"], d["canter_fraction_of_raw_policy_states"])
    at = " / ".join(f"{return_at(c['curve'], m * 1e6):.0f}" for m in MARKS_M)
    print(f"| seed {seed} | {epochs} | {' / '.join(f'{r:,.0f}' for r in raw)} | {c['frames_per_s']:,.0f} "
          f"| {', '.join(f'{r:.2f}' for r in ratios)} | {at} | {c['eval_mean_return']:.0f} ± {c['eval_std_return']:.0f} |")

print()
print("| 45-s bench, in run order | epochs | step FPS | total FPS | s / iteration | physics | inference | update |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
totals: dict[int, list[float]] = {5: [], 3: []}
for r in (1, 2, 3):
    for name, epochs in (("e5", 5), ("e3", 3)):
        d = json.loads((HERE / "ab" / f"{name}_{r}.json").read_text())
        p = d["phase_seconds"]
        totals[epochs].append(d["total_fps"])
        print(f"| {r} | {epochs} | {d['step_fps']:,.0f} | {d['total_fps']:,.0f} | {d['iteration_time_s']:.3f} "
              f"| {p['physics']:.3f} | {p['inference']:.3f} | {p['update']:.3f} |")
pairs = [b / a for a, b in zip(totals[5], totals[3], strict=True)]
print(f"\ntotal FPS, 3 epochs / 5, pair by pair: {', '.join(f'{x:.2f}' for x in pairs)} (median {statistics.median(pairs):.2f})")
