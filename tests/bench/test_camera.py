"""`canter bench camera`: the result's figures and keys, the JSON/--out output, and bad input."""

from __future__ import annotations

import json

import pytest

from canter.bench.camera import CameraBenchCfg, run_camera_bench
from canter.cli.main import main
from canter.core.errors import ConfigError
from canter.sim.model import asset_path

TABLE = str(asset_path("camera_table.xml"))


def test_result_holds_the_figures_scripts_read():
    cfg = CameraBenchCfg(
        model=TABLE, num_envs=4, resolution=16, repeats=2, seconds=0.05, outputs=("depth", "rgb")
    )
    result = run_camera_bench(cfg)
    assert result.camera == "overhead" and result.width == result.height == 16
    assert result.images_per_s_min <= result.images_per_s <= result.images_per_s_max
    assert result.images_per_s > 0 and result.camera_ms > 0 and result.step_ms > 0
    share = result.camera_ms / (result.camera_ms + result.step_ms)
    assert result.camera_share_of_step == pytest.approx(share)
    if result.renderer_loop_images_per_s is None:  # no OpenGL here: the reason is given
        assert result.renderer_error is not None and result.ratio is None
    else:
        assert result.renderer_gl in ("egl", "osmesa")
        assert result.ratio == pytest.approx(result.images_per_s / result.renderer_loop_images_per_s)
    keys = result.to_dict()
    for key in ("images_per_s", "renderer_loop_images_per_s", "ratio", "camera_share_of_step", "machine"):
        assert key in keys


def test_cli_prints_json_and_writes_out(tmp_path, capsys):
    argv = ["bench", "camera", "--model", TABLE, "--num-envs", "2", "--resolution", "8", "--repeats", "1", "--seconds", "0.02",
            "--no-renderer-loop", "--camera", "oblique", "--json", "--out", str(tmp_path)]  # fmt: skip
    assert main(argv) == 0
    printed = json.loads(capsys.readouterr().out)
    written = json.loads((tmp_path / "camera.json").read_text())
    assert printed["camera"] == written["camera"] == "oblique"
    assert printed["renderer_loop_images_per_s"] is None and printed["ratio"] is None
    assert printed["num_envs"] == 2 and printed["images_per_s"] > 0
    assert printed["camera_path"] == "kernel" and printed["batch_ray_images_per_s"] > 0


def test_bad_input_names_the_problem():
    with pytest.raises(ConfigError, match="exactly one of TASK or --model"):
        run_camera_bench(CameraBenchCfg(num_envs=2))
    with pytest.raises(ConfigError, match=r"no camera named 'wrist' \(its cameras: overhead, oblique\)"):
        run_camera_bench(CameraBenchCfg(model=TABLE, camera="wrist", num_envs=2, renderer_loop=False))
    with pytest.raises(ConfigError, match="resolution must be >= 1"):
        run_camera_bench(CameraBenchCfg(model=TABLE, resolution=0, num_envs=2, renderer_loop=False))
