"""BENCHMARKS §15 (the Xeon paragraphs): cartpole's time to an evaluation return of 4.75 (95 % of 5) for each variant
and seed in this folder (NAME_sS.json, written by sweep.sh; kl02e1: the defaults evaluated every second), with the median and the worst. Usage: python table.py"""
import json
import statistics
from pathlib import Path

HERE = Path(__file__).parent

for name in ("kl01", "ent0", "std05", "kl02", "kl02e1"):
    runs = sorted(HERE.glob(f"{name}_s*.json"), key=lambda p: int(p.stem.split("_s")[1]))
    times, cells = [], []
    for path in runs:
        d = json.loads(path.read_text())
        t = d["time_to_target_s"]
        times.append(t if t is not None else float("inf"))
        cells.append(f"s{path.stem.split('_s')[1]} {t:.1f} s / {d['env_steps_to_target'] / 1e6:.2f} M" if t is not None
                     else f"s{path.stem.split('_s')[1]} not reached")
    print(f"{name}: median {statistics.median(times):.1f} s, worst {max(times):.1f} s, "
          f"{sum(t <= 10 for t in times)} of {len(times)} seeds by 10 s; " + ", ".join(cells))
