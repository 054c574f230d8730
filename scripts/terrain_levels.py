"""The terrain-curriculum level distribution of a run, read from its checkpoint, and the mean level
and top-third share against wall time, read from its TensorBoard log.

Usage: python scripts/terrain_levels.py RUN_DIR [--out DIR]

Prints a markdown table (envs per difficulty row and terrain type) and writes terrain_levels.png,
terrain_levels.json and (when the log has them) terrain_curve.png into DIR (default: RUN_DIR).
The terrain's layout (its rows, columns and sub-terrains) is the one the run was built with, read from
its config.yaml, so a run whose task has changed since (or whose --env.* overrides no longer parse)
is still read; a run without that file is rebuilt from its command.json. Bad input: one line, exit 2.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import torch
import yaml

from canter.core.errors import CanterError
from canter.rl.checkpoint import load_checkpoint
from canter.runs.parsing import ScriptParser
from canter.runs.rundir import CONFIG_FILE, read_command
from canter.terrains.generator import columns_by_proportion


def main() -> None:
    parser = ScriptParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("run_dir")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    try:
        report(Path(args.run_dir), Path(args.out) if args.out else None)
    except CanterError as err:
        print(f"terrain_levels.py: error: {err}", file=sys.stderr)
        sys.exit(2)


def _layout(run_dir: Path) -> tuple[int, list[str]]:
    """The run's terrain as it was built: its number of rows and the sub-terrain type of each column.
    From config.yaml (the resolved config written when the run was created), else from command.json
    (the task as registered now, with the run's overrides)."""
    config = run_dir / CONFIG_FILE
    if config.is_file():
        try:
            terrain = (yaml.safe_load(config.read_text()).get("env") or {}).get("terrain")
            if not terrain:
                raise CanterError(f"{run_dir}: the run's config has no terrain")
            proportions = {str(name): float(sub["proportion"]) for name, sub in terrain["sub_terrains"].items()}
            num_rows, num_cols = int(terrain["num_rows"]), int(terrain["num_cols"])
        except (OSError, yaml.YAMLError, AttributeError, KeyError, TypeError, ValueError) as err:
            raise CanterError(f"corrupt {config}: {' '.join(str(err).split())}") from None
    else:
        cfg = read_command(run_dir).train_args().env.terrain
        if cfg is None:
            raise CanterError(f"{run_dir}: the run's config has no terrain")
        proportions = {name: sub.proportion for name, sub in cfg.sub_terrains.items()}
        num_rows, num_cols = cfg.num_rows, cfg.num_cols
    names = list(proportions)
    return num_rows, [names[int(i)] for i in columns_by_proportion(list(proportions.values()), num_cols)]


def report(run_dir: Path, out: Path | None) -> None:
    if not (run_dir / "checkpoint.pt").is_file():
        raise CanterError(f"{run_dir}: no checkpoint.pt (not a run directory, or a run that has not saved yet)")
    payload = load_checkpoint(run_dir / "checkpoint.pt")
    terrain = payload["env"].get("terrain")
    if terrain is None:
        raise CanterError(f"{run_dir}: the run has no terrain")
    levels = terrain["terrain_levels"].long()
    types = terrain["terrain_types"].long()
    config_rows, layout = _layout(run_dir)
    num_rows = max(config_rows, int(levels.max()) + 1)
    num_cols = int(types.max()) + 1
    column_names = (layout + [layout[-1]] * num_cols)[:num_cols]
    type_names = list(dict.fromkeys(column_names))
    type_of_column = torch.tensor([type_names.index(name) for name in column_names])
    counts = torch.zeros(num_rows, len(type_names), dtype=torch.long)
    counts.index_put_((levels, type_of_column[types]), torch.ones_like(levels), accumulate=True)
    header = "| level | " + " | ".join(type_names) + " | all |"
    lines = [header, "|" + "---|" * (len(type_names) + 2)]
    for row in range(num_rows):
        cells = " | ".join(str(int(c)) for c in counts[row])
        lines.append(f"| {row} | {cells} | {int(counts[row].sum())} |")
    rows = torch.arange(num_rows, dtype=torch.float64)
    type_means = (rows[:, None] * counts).sum(dim=0) / counts.sum(dim=0).clamp_min(1)
    lines.append("| mean | " + " | ".join(f"{float(m):.2f}" for m in type_means) + f" | {levels.float().mean():.2f} |")
    print(f"iteration {payload['iteration']}, {levels.numel()} envs, mean level {levels.float().mean():.2f}")
    print("\n".join(lines))
    print(f"(a type solved to its top row holds a mean of {solved_mean_level(num_rows):.2f}: an env promoted past the top "
          "goes to a random row and climbs back one row per episode)")
    out = out or run_dir
    out.mkdir(parents=True, exist_ok=True)
    summary = {
        "iteration": int(payload["iteration"]),
        "wall_time_s": float(payload["wall_time_s"]),
        "num_envs": levels.numel(),
        "mean_level": float(levels.float().mean()),
        "row_counts": counts.sum(dim=1).tolist(),
        "counts_by_type": {name: counts[:, i].tolist() for i, name in enumerate(type_names)},
        "mean_by_type": {name: float(type_means[i]) for i, name in enumerate(type_names)},
        "solved_mean_level": solved_mean_level(num_rows),
    }
    curve = _curve(run_dir)
    if curve:
        summary["curve"] = curve
        _plot_curve(curve, out / "terrain_curve.png")
    (out / "terrain_levels.json").write_text(json.dumps(summary, indent=2))
    _plot(counts, type_names, out / "terrain_levels.png", summary)


def solved_mean_level(num_rows: int) -> float:
    """The mean level of envs on a sub-terrain they solve at every row, one promotion per episode: past the
    top row an env goes to a row drawn uniformly from 0..n-1 (Terrain.update_levels) and climbs back, so
    row k is visited with weight k + 1 and the mean is sum k(k+1) / sum (k+1) = 2(n-1)/3 (6.0 for 10 rows)."""
    return 2.0 * (num_rows - 1) / 3.0


def _curve(run_dir: Path) -> dict[str, list[float]]:
    """Wall time (min), iteration, mean level and top-third share of every logged iteration; {} when
    the run's TensorBoard log lacks the curriculum scalars."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    log = EventAccumulator(str(run_dir), size_guidance={"scalars": 0})
    log.Reload()
    tags = set(log.Tags()["scalars"])
    if not {"Curriculum/terrain_levels", "Perf/wall_time_s"} <= tags:
        return {}
    wall = {e.step: e.value for e in log.Scalars("Perf/wall_time_s")}
    top = {e.step: e.value for e in log.Scalars("Curriculum/terrain_top_third")} if "Curriculum/terrain_top_third" in tags else {}
    level = [e for e in log.Scalars("Curriculum/terrain_levels") if e.step in wall]
    return {"iteration": [e.step for e in level], "minutes": [wall[e.step] / 60.0 for e in level],
            "mean_level": [e.value for e in level], "top_third": [top.get(e.step, float("nan")) for e in level]}


def _plot_curve(curve: dict[str, list[float]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.5))
    ax.plot(curve["minutes"], curve["mean_level"], color="tab:blue", label="mean terrain level")
    ax.set_xlabel("training wall time (min)")
    ax.set_ylabel("mean terrain level", color="tab:blue")
    if any(math.isfinite(v) for v in curve["top_third"]):  # runs that logged it (Curriculum/terrain_top_third)
        share = ax.twinx()
        share.plot(curve["minutes"], [100.0 * v for v in curve["top_third"]], color="tab:orange", label="envs on the top third (%)")
        share.set_ylabel("envs on the top third of the levels (%)", color="tab:orange")
    ax.set_title("terrain curriculum against wall time")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _plot(counts: torch.Tensor, type_names: list[str], path: Path, summary: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.5))
    bottom = torch.zeros(counts.shape[0])
    for i, name in enumerate(type_names):
        ax.bar(range(counts.shape[0]), counts[:, i].float(), bottom=bottom, label=name)
        bottom += counts[:, i].float()
    ax.set_xlabel("terrain level (difficulty row)")
    ax.set_ylabel("envs")
    minutes = summary["wall_time_s"] / 60
    ax.set_title(f"terrain levels after {summary['iteration']} iterations ({minutes:.0f} min), mean {summary['mean_level']:.2f}")
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    main()
