"""`canter eval/play` on terrain tasks: every env on one difficulty row (`--terrain-level`), or the envs
spread over every block of the grid and the episodes scored per level and sub-terrain type
(`--terrain-grid`): the share that walked out of their block (the curriculum's promotion rule), the
distance walked, the share ended early (a fall or any other termination; not a truncation: the time-out, walking out)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import torch
from rich.console import Console
from rich.table import Table

from canter.core.errors import CanterError
from canter.core.files import save_figure


def check_terrain_flags(level: int | None, sub_terrain: str | None, grid: bool = False) -> None:
    """CanterError (one line) for terrain flags that do not go together (before anything is loaded)."""
    if grid and (level is not None or sub_terrain is not None):
        raise CanterError("--terrain-grid: spreads the envs over every level and type; drop --terrain-level/--sub-terrain")
    if level is None and sub_terrain is not None:
        raise CanterError("--sub-terrain: needs --terrain-level (the difficulty row to put every env on)")


def pin_terrain(env: Any, level: int | None, sub_terrain: str | None, grid: bool = False) -> None:
    """`--terrain-level L [--sub-terrain NAME]` or `--terrain-grid`: place and keep every env (see
    Terrain.pin, Terrain.pin_grid); CanterError (one line) for a task without a generated terrain,
    a bad row or type, or flags that do not go together."""
    check_terrain_flags(level, sub_terrain, grid)
    if level is None and not grid:
        return
    flag = "--terrain-grid" if grid else "--terrain-level"
    terrain = getattr(env, "terrain", None)
    if terrain is None:
        raise CanterError(f"{flag}: this task has no terrain")
    if grid:
        terrain.pin_grid()
    else:
        terrain.pin(level, sub_terrain)


def grid_report(env: Any, per_episode: dict[str, torch.Tensor]) -> dict[str, Any]:
    """Per sub-terrain type, per level (row): episodes, the share that walked out of their block,
    the mean distance walked (m), the share that ended early (by a term that is not a truncation). NaN where a block got no episode."""
    terrain = env.terrain
    levels = terrain.terrain_levels.cpu()[per_episode["env"]]
    names = terrain.type_names()
    types = [names[int(i)] for i in per_episode["env"]]
    early = torch.zeros(len(types), dtype=torch.bool)
    terminations = getattr(env, "termination_manager", None)
    if "ending" in per_episode and terminations is not None:
        truncation = torch.tensor(terminations.time_out, dtype=torch.bool)  # per term: cut short, not ended
        early = ~truncation[per_episode["ending"]]
    report: dict[str, Any] = {"levels": list(range(terrain.num_rows)), "types": {}}
    for name in dict.fromkeys(names):
        of_type = torch.tensor([t == name for t in types], dtype=torch.bool)
        rows: dict[str, list[float]] = {"episodes": [], "walked_out": [], "distance_walked": [], "ended_early": []}
        for level in range(terrain.num_rows):
            here = of_type & (levels == level)
            count = int(here.sum())
            rows["episodes"].append(float(count))
            for key, values in (("walked_out", per_episode["walked_out"]), ("distance_walked", per_episode["distance_walked"]),
                                ("ended_early", early.double())):
                rows[key].append(float(values[here].double().mean()) if count else math.nan)
        report["types"][name] = rows
    return report


def print_grid(report: dict[str, Any], console: Console) -> None:
    table = Table(title="walked out of the block (share of episodes) / mean distance walked, by level and type")
    table.add_column("level", justify="right")
    for name in report["types"]:
        table.add_column(name, justify="right")
    for level in report["levels"]:
        cells = []
        for rows in report["types"].values():
            share, distance = rows["walked_out"][level], rows["distance_walked"][level]
            cells.append("–" if math.isnan(share) else f"{100 * share:.0f} % / {distance:.1f} m")
        table.add_row(str(level), *cells)
    console.print(table)


def plot_grid(report: dict[str, Any], path: Path, title: str) -> Path:
    """A heat map of the walked-out share, levels up the y axis, types along x, as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(report["types"])
    share = torch.tensor([report["types"][n]["walked_out"] for n in names]).T  # (levels, types)
    fig, ax = plt.subplots(figsize=(1.6 * len(names) + 2.0, 0.45 * len(report["levels"]) + 1.6))
    image = ax.imshow(100 * share.numpy(), origin="lower", cmap="viridis", vmin=0, vmax=100, aspect="auto")
    for level in report["levels"]:
        for col, name in enumerate(names):
            value = report["types"][name]["walked_out"][level]
            if not math.isnan(value):
                ax.text(col, level, f"{100 * value:.0f}", ha="center", va="center",
                        color="white" if value < 0.5 else "black", fontsize=8)
    ax.set_xticks(range(len(names)), names)
    ax.set_yticks(report["levels"])
    ax.set_ylabel("terrain level (difficulty row)")
    ax.set_title(title, fontsize=9)
    fig.colorbar(image, ax=ax, label="walked out of the block (% of episodes)")
    save_figure(fig, path, dpi=120)
    return path
