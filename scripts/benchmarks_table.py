"""Print the markdown tables of BENCHMARKS.md from the JSON files scripts/run_benchmarks.sh wrote."""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

from canter.runs.parsing import ScriptParser


def load(out: Path, name: str) -> dict | list | None:
    path = out / name
    try:
        return json.loads(path.read_text()) if path.is_file() else None
    except ValueError:  # still being written, or the run failed
        return None


def env_rows(out: Path) -> list[str]:
    rows = ["| task (model) | backend | envs | threads | raw Batch steps/s (min–max) | Canter env steps/s (min–max) | env / raw (min–max) |",
            "|---|---|---|---|---|---|---|"]
    for name in ("env_ant_256.json", "env_ant_1024.json", "env_ant_4096.json", "env_gymant_1024.json",
                 "env_cartpole_1024.json", "env_dog_1024.json", "env_ant_warp_256.json"):
        r = load(out, name)
        if not isinstance(r, dict):
            continue
        model = ("Gymnasium's " if "gymnasium" in r["model_path"] else "canter/assets/") + Path(r["model_path"]).name
        rows.append(
            f"| {r['task']} ({model}) | {r['backend']} | {r['num_envs']} | {r['threads']} | "
            f"{r['raw_rollout_steps_per_s']:,.0f} ({r['raw_rollout_steps_per_s_min']:,.0f}–{r['raw_rollout_steps_per_s_max']:,.0f}) | "
            f"{r['env_steps_per_s']:,.0f} ({r['env_steps_per_s_min']:,.0f}–{r['env_steps_per_s_max']:,.0f}) | "
            f"{r['ratio']:.3f} ({r['ratio_min']:.3f}–{r['ratio_max']:.3f}) |"
        )
    return rows


def train_rows(out: Path) -> list[str]:
    rows = ["| run | envs | step FPS | step+inference FPS | total FPS | iteration (s) | iterations |", "|---|---|---|---|---|---|---|"]
    for name, label in (("train_gymant.json", "ant-classic on Gymnasium's ant.xml"), ("train_ant_eager.json", "ant, eager"),
                        ("train_ant_compile.json", "ant, torch.compile"), ("train_dog.json", "dog-flat")):
        r = load(out, name)
        if isinstance(r, dict):
            rows.append(f"| {label} | {r['num_envs']} | {r['step_fps']:,.0f} | {r['step_inference_fps']:,.0f} | {r['total_fps']:,.0f} | "
                        f"{r['iteration_time_s']:.2f} ({r['iteration_time_s_min']:.2f}–{r['iteration_time_s_max']:.2f}) | {r['iterations']} |")
    return rows


def cartpole_rows(out: Path) -> list[str]:
    progress = out / "cartpole_run" / "progress.csv"
    if not progress.is_file():
        return []
    history = list(csv.DictReader(progress.open()))
    target = 0.95 * 5.0
    reached = next((row for row in history if float(row["mean_return"]) >= target), None)
    evaluation = load(out, "cartpole_eval.json") or {}
    when = f"{float(reached['wall_time_s']):.1f} s (iteration {int(float(reached['iteration']))}, {int(float(reached['env_steps'])):,} env steps)" if reached else "not reached"
    return [f"- time to mean training return ≥ {target:.2f} (95% of 5.0): **{when}**",
            f"- final policy, `canter eval` over {int(evaluation.get('episodes', 0))} episodes: "
            f"{evaluation.get('mean_return', float('nan')):.3f} ± {evaluation.get('std_return', float('nan')):.3f}"]


def sb3_rows(out: Path) -> list[str]:
    rows = ["| minutes | raw Batch steps/s | Canter frames/s | SB3 frames/s | Canter / SB3 | Canter / raw | Canter eval return | SB3 eval return |",
            "|---|---|---|---|---|---|---|---|"]
    for path in sorted(out.glob("sb3_*min.json"), key=lambda p: float(p.stem[4:-3])):
        try:
            r = json.loads(path.read_text())
            r["canter"]["frames_per_s"]
        except (ValueError, KeyError, TypeError):  # being written, or from a failed run
            continue
        rows.append(f"| {r['minutes']:g} | {r['raw_batch_steps_per_s']:,.0f} | {r['canter']['frames_per_s']:,.0f} | {r['sb3']['frames_per_s']:,.0f} | "
                    f"{r['speedup_frames']:.1f}× | {r['canter_fraction_of_raw']:.2f} | {r['canter']['eval_mean_return']:.0f} ± {r['canter']['eval_std_return']:.0f} | "
                    f"{r['sb3']['eval_mean_return']:.0f} ± {r['sb3']['eval_std_return']:.0f} |")
    return rows


def memory_rows(out: Path) -> list[str]:
    data = load(out, "memory_ant.json")
    if not isinstance(data, list):
        return []
    rows = ["| envs | per-env model fields (bytes) |", "|---|---|"]
    rows += [f"| {r['num_envs']} | {r['total_bytes']:,} ({r['total_bytes'] / 2**20:.2f} MiB) |" for r in data]
    return rows


def main() -> int:
    parser = ScriptParser(prog="benchmarks_table.py", description=__doc__)
    parser.add_argument("out", nargs="?", default="bench_out", help="the folder scripts/run_benchmarks.sh wrote")
    out = Path(parser.parse_args().out)
    if not out.is_dir():
        print(f"benchmarks_table.py: error: no folder {out} (run scripts/run_benchmarks.sh {out} first)", file=sys.stderr)
        return 2
    if not any(out.glob("*.json")):
        print(f"benchmarks_table.py: error: {out} holds no benchmark JSON (scripts/run_benchmarks.sh writes it)", file=sys.stderr)
        return 2
    for title, rows in (("env", env_rows(out)), ("train", train_rows(out)), ("cartpole", cartpole_rows(out)),
                        ("sb3", sb3_rows(out)), ("memory", memory_rows(out))):
        print(f"### {title}\n")
        print("\n".join(rows))
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
