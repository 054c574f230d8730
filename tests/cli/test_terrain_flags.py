"""`canter eval/play --terrain-level L [--sub-terrain NAME]`: every env of a terrain task on one
difficulty row (of one type), kept there, with the distance walked and the promotion rule reported;
one-line errors for a row out of range, a type the terrain lacks, a task without terrain."""

from __future__ import annotations

import json

import pytest

from canter.cli.main import main
from canter.core.errors import CanterError

from .test_train import SMALL, _canter, _one_error_line


def test_eval_on_one_stairs_row_reports_the_distance_walked(tmp_path, capsys):
    run = tmp_path / "rough"
    assert main(["train", "dog-rough", "--run-dir", str(run), *SMALL, "--max-iterations", "1"]) == 0
    capsys.readouterr()
    assert main(["eval", str(run), "--episodes", "2", "--num-envs", "2", "--terrain-level", "9",
                 "--sub-terrain", "stairs_up", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["terrain_level"] == 9 and result["sub_terrain"] == "stairs_up"
    assert result["episodes"] == 2
    assert 0.0 <= result["walked_out_mean"] <= 1.0 and result["distance_walked_max"] >= result["distance_walked_mean"] >= 0.0
    line = _one_error_line(_canter("eval", str(run), "--num-envs", "2", "--terrain-level", "10"))
    assert "--terrain-level: 10 is out of range (this terrain has levels 0..9)" in line
    with pytest.raises(CanterError, match="--sub-terrain: 'lava' is not in this terrain"):
        main(["eval", str(run), "--num-envs", "2", "--terrain-level", "0", "--sub-terrain", "lava"])
    with pytest.raises(CanterError, match="--sub-terrain: needs --terrain-level"):
        main(["play", str(run), "--num-envs", "2", "--sub-terrain", "stairs_up"])
    cartpole = tmp_path / "cartpole"
    assert main(["train", "cartpole", "--run-dir", str(cartpole), *SMALL, "--max-iterations", "1"]) == 0
    with pytest.raises(CanterError, match="--terrain-level: this task has no terrain"):
        main(["play", str(cartpole), "--num-envs", "2", "--steps", "1", "--terrain-level", "0"])
