"""`canter eval/play --terrain-level L [--sub-terrain NAME]`: every env of a terrain task on one
difficulty row (of one type), kept there, with the distance walked and the promotion rule reported;
one-line errors for a row out of range, a type the terrain lacks, a task without terrain."""

from __future__ import annotations

import json
import math
from types import SimpleNamespace

import pytest
import torch

from canter.cli.main import main
from canter.cli.terrain_report import grid_report
from canter.core.errors import CanterError
from canter.terrains import Terrain, TerrainCfg, sub_terrain_mix

from .test_train import SMALL, _in_process, _one_error_line


def test_eval_on_one_stairs_row_reports_the_distance_walked(dog_rough_run, tmp_path, capfd):
    run = dog_rough_run
    capfd.readouterr()
    assert main(["eval", str(run), "--episodes", "2", "--num-envs", "2", "--terrain-level", "9",
                 "--sub-terrain", "stairs_up", "--json"]) == 0
    result = json.loads(capfd.readouterr().out)
    assert result["terrain_level"] == 9 and result["sub_terrain"] == "stairs_up"
    assert result["episodes"] == 2
    assert 0.0 <= result["walked_out_mean"] <= 1.0 and result["distance_walked_max"] >= result["distance_walked_mean"] >= 0.0
    line = _one_error_line(_in_process(capfd, "eval", str(run), "--num-envs", "2", "--terrain-level", "10"))
    assert "--terrain-level: 10 is out of range (this terrain has levels 0..9)" in line
    with pytest.raises(CanterError, match="--sub-terrain: 'lava' is not in this terrain"):
        main(["eval", str(run), "--num-envs", "2", "--terrain-level", "0", "--sub-terrain", "lava"])
    with pytest.raises(CanterError, match="--sub-terrain: needs --terrain-level"):
        main(["play", str(run), "--num-envs", "2", "--sub-terrain", "stairs_up"])
    with pytest.raises(CanterError, match="--terrain-grid: spreads the envs over every level and type"):
        main(["eval", str(run), "--terrain-grid", "--terrain-level", "1"])
    with pytest.raises(CanterError, match="--plot: draws the --terrain-grid report"):
        main(["eval", str(run), "--plot", str(tmp_path / "grid.png")])
    # the grid: 40 envs over 10 rows x 20 columns (two rows of columns 0..19), one episode each
    assert main(["eval", str(run), "--episodes", "40", "--num-envs", "40", "--terrain-grid", "--plot",
                 str(tmp_path / "grid.png"), "--json"]) == 0
    grid = json.loads(capfd.readouterr().out)["terrain_grid"]
    assert grid["levels"] == list(range(10)) and (tmp_path / "grid.png").stat().st_size > 0
    assert sum(sum(rows["episodes"]) for rows in grid["types"].values()) == 40
    assert all(rows["episodes"][2:] == [0.0] * 8 for rows in grid["types"].values())
    cartpole = tmp_path / "cartpole"
    assert main(["train", "cartpole", "--run-dir", str(cartpole), *SMALL, "--max-iterations", "1"]) == 0
    with pytest.raises(CanterError, match="--terrain-level: this task has no terrain"):
        main(["play", str(cartpole), "--num-envs", "2", "--steps", "1", "--terrain-level", "0"])


def test_grid_report_counts_every_block_by_level_and_type():
    cfg = TerrainCfg(size=(4.0, 4.0), num_rows=3, num_cols=4, border_width=1.0, platform_width=1.0,
                     sub_terrains=sub_terrain_mix(flat=1.0, stairs_up=3.0))
    terrain = Terrain(cfg, 24, "cpu", torch.Generator().manual_seed(0))
    terrain.pin_grid()
    # env i: column i % 4 (0 flat, 1-3 stairs), row (i // 4) % 3; two envs per block
    assert terrain.terrain_types.tolist() == [0, 1, 2, 3] * 6
    assert terrain.terrain_levels.tolist() == [r for r in (0, 1, 2, 0, 1, 2) for _ in range(4)]
    assert terrain.type_names()[:4] == ["flat", "stairs_up", "stairs_up", "stairs_up"]
    terminations = SimpleNamespace(names=["time_out", "fell", "walked_out"], time_out=[True, False, True])
    env = SimpleNamespace(terrain=terrain, termination_manager=terminations)
    # one episode per env, envs 0..23; walked out: the stair envs of row 0; ended early: env 5 and 9 (env 13 was cut
    # short on walking out: a truncation, not an early end)
    distance = torch.tensor([5.0 if (i % 4 and (i // 4) % 3 == 0) else 1.0 for i in range(24)])
    ending = torch.zeros(24, dtype=torch.long)
    ending[[5, 9]] = 1
    ending[13] = 2
    per_episode = {"env": torch.arange(24), "walked_out": (distance > 2.0).float(), "distance_walked": distance,
                   "ending": ending}
    report = grid_report(env, per_episode)
    assert report["levels"] == [0, 1, 2] and list(report["types"]) == ["flat", "stairs_up"]
    stairs, flat = report["types"]["stairs_up"], report["types"]["flat"]
    assert stairs["episodes"] == [6.0, 6.0, 6.0] and flat["episodes"] == [2.0, 2.0, 2.0]
    assert stairs["walked_out"] == [1.0, 0.0, 0.0] and flat["walked_out"] == [0.0, 0.0, 0.0]
    assert stairs["distance_walked"] == [5.0, 1.0, 1.0]
    # env 5 (column 1, row 1) and env 9 (column 1, row 2): one early end in six stair episodes each
    assert stairs["ended_early"] == pytest.approx([0.0, 1 / 6, 1 / 6]) and flat["ended_early"] == [0.0, 0.0, 0.0]
    # a block without episodes is NaN
    report = grid_report(env, {key: value[:4] for key, value in per_episode.items()})
    assert report["types"]["flat"]["episodes"] == [1.0, 0.0, 0.0] and math.isnan(report["types"]["flat"]["walked_out"][1])
