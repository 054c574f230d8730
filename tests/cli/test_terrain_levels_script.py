"""scripts/terrain_levels.py: the level distribution of a run by type, read with the terrain layout the run was
built with (its config.yaml), so a run whose --env.* overrides no longer parse (its task changed since) is still
read; bad input gets one line and exit 2."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from canter.rl.checkpoint import load_checkpoint
from canter.terrains import column_types
from canter.terrains.config import rough_terrain_cfg
from canter.terrains.generator import columns_by_proportion

SCRIPT = Path(__file__).parents[2] / "scripts" / "terrain_levels.py"


def _script(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=300)


def test_columns_by_proportion_is_the_generators_layout():
    assert columns_by_proportion([1.0, 3.0], 4).tolist() == [0, 1, 1, 1]
    assert columns_by_proportion([0.1, 0.0, 0.3], 8).tolist() == [0, 0, 2, 2, 2, 2, 2, 2]
    cfg = rough_terrain_cfg()
    props = [sub.proportion for sub in cfg.sub_terrains.values()]
    assert columns_by_proportion(props, cfg.num_cols).tolist() == column_types(cfg).tolist()


def test_levels_of_a_run_whose_overrides_no_longer_parse(dog_rough_run, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(dog_rough_run, run)
    command = json.loads((run / "command.json").read_text())
    command["overrides"] = ["--env.events.gone.params.mass-range", "0", "0"]  # a term the task has since lost
    (run / "command.json").write_text(json.dumps(command))
    out = tmp_path / "levels"
    done = _script(str(run), "--out", str(out))
    assert done.returncode == 0, done.stderr
    payload = load_checkpoint(run / "checkpoint.pt")
    levels = payload["env"]["terrain"]["terrain_levels"].long()
    types = payload["env"]["terrain"]["terrain_types"].long()
    summary = json.loads((out / "terrain_levels.json").read_text())
    assert summary["num_envs"] == levels.numel() and summary["mean_level"] == float(levels.float().mean())
    # each env counted under its column's sub-terrain, as the generator laid the columns out
    names = list(rough_terrain_cfg().sub_terrains)
    by_column = [names[int(i)] for i in column_types(rough_terrain_cfg())]
    expected = {name: [0] * 10 for name in by_column[: int(types.max()) + 1]}  # the types up to the last column used
    for level, column in zip(levels.tolist(), types.tolist(), strict=True):
        expected[by_column[column]][level] += 1
    assert summary["counts_by_type"] == expected
    assert sum(summary["row_counts"]) == levels.numel() and (out / "terrain_levels.png").stat().st_size > 0
    assert f"mean level {float(levels.float().mean()):.2f}" in done.stdout
    # without config.yaml the layout is rebuilt from command.json, whose stale override is refused in one line
    (run / "config.yaml").unlink()
    done = _script(str(run))
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1
    assert "unrecognized options: --env.events.gone.params.mass-range" in done.stderr
    # a corrupt config.yaml, a folder that is no run: one line each, exit 2
    (run / "config.yaml").write_text("env: [1, 2\n")
    done = _script(str(run))
    assert done.returncode == 2 and done.stderr.startswith(f"terrain_levels.py: error: corrupt {run / 'config.yaml'}")
    assert len(done.stderr.strip().splitlines()) == 1
    done = _script(str(tmp_path / "nothing"))
    assert done.returncode == 2 and "no checkpoint.pt" in done.stderr and len(done.stderr.strip().splitlines()) == 1
