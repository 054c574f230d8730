"""The terrain-curriculum level distribution of a run, read from its checkpoint.

Usage: python scripts/terrain_levels.py RUN_DIR [--out DIR]

Prints a markdown table (envs per difficulty row and terrain type) and writes
terrain_levels.png and terrain_levels.json into DIR (default: RUN_DIR).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch

from canter.rl.checkpoint import load_checkpoint
from canter.terrains.config import SUB_TERRAIN_TYPES, TerrainCfg
from canter.terrains.generator import column_types


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    run_dir = Path(args.run_dir)
    payload = load_checkpoint(run_dir / "checkpoint.pt")
    terrain = payload["env"].get("terrain")
    if terrain is None:
        raise SystemExit(f"{run_dir}: the run has no terrain")
    levels = terrain["terrain_levels"].long()
    types = terrain["terrain_types"].long()
    cfg = TerrainCfg()
    num_rows = max(cfg.num_rows, int(levels.max()) + 1)
    column_names = _column_names(cfg, int(types.max()) + 1)
    type_names = list(dict.fromkeys(column_names))
    type_of_column = torch.tensor([type_names.index(name) for name in column_names])
    counts = torch.zeros(num_rows, len(type_names), dtype=torch.long)
    counts.index_put_((levels, type_of_column[types]), torch.ones_like(levels), accumulate=True)
    header = "| level | " + " | ".join(type_names) + " | all |"
    lines = [header, "|" + "---|" * (len(type_names) + 2)]
    for row in range(num_rows):
        cells = " | ".join(str(int(c)) for c in counts[row])
        lines.append(f"| {row} | {cells} | {int(counts[row].sum())} |")
    print(f"iteration {payload['iteration']}, {levels.numel()} envs, mean level {levels.float().mean():.2f}")
    print("\n".join(lines))
    out = Path(args.out) if args.out else run_dir
    out.mkdir(parents=True, exist_ok=True)
    summary = {
        "iteration": int(payload["iteration"]),
        "wall_time_s": float(payload["wall_time_s"]),
        "num_envs": levels.numel(),
        "mean_level": float(levels.float().mean()),
        "row_counts": counts.sum(dim=1).tolist(),
        "counts_by_type": {name: counts[:, i].tolist() for i, name in enumerate(type_names)},
    }
    (out / "terrain_levels.json").write_text(json.dumps(summary, indent=2))
    _plot(counts, type_names, out / "terrain_levels.png", summary)


def _column_names(cfg: TerrainCfg, num_cols: int) -> list[str]:
    """Sub-terrain type of each column, as the generator lays them out."""
    names = [SUB_TERRAIN_TYPES[int(i)] for i in column_types(cfg)]
    return (names + [names[-1]] * num_cols)[:num_cols]


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
