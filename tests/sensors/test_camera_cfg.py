"""CameraCfg validation and the pixel-ray convention."""

from __future__ import annotations

import math

import pytest
import torch

from canter.core.errors import ConfigError
from canter.sensors.camera_cfg import CameraCfg, camera_id, pixel_directions
from canter.sim.model import asset_path, load_model


def test_bad_fields_name_the_problem():
    with pytest.raises(ConfigError, match="resolution must be >= 1 pixel, got 0x64"):
        CameraCfg(name="overhead", width=0)
    with pytest.raises(ConfigError, match="unknown output 'normals'"):
        CameraCfg(name="overhead", outputs=("depth", "normals"))  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="near < far"):
        CameraCfg(name="overhead", near=2.0, far=1.0)
    with pytest.raises(ConfigError, match="at least one"):
        CameraCfg(name="overhead", outputs=())


def test_unknown_camera_lists_the_models_cameras():
    model = load_model(asset_path("camera_table.xml"))
    assert camera_id(model, CameraCfg(name="oblique")) == 1
    with pytest.raises(ConfigError, match=r"no camera named 'wrist' \(its cameras: overhead, oblique\)"):
        camera_id(model, CameraCfg(name="wrist"))


def test_pixel_directions_follow_the_pinhole_model():
    # 4 x 2 image, fovy 90 deg: focal length (H/2)/tan(45 deg) = 1 pixel
    directions = pixel_directions(90.0, 4, 2, torch.float64)
    assert directions.shape == (8, 3)
    assert (directions[:, 2] == -1).all()  # z = -1: ray parameter = planar depth
    # top-left pixel centre (0.5, 0.5): x = 0.5 - 2 = -1.5, y = -(0.5 - 1) = +0.5 (up)
    assert directions[0].tolist() == pytest.approx([-1.5, 0.5, -1.0], abs=1e-12)
    # bottom-right pixel: x = 3.5 - 2 = 1.5, y = -(1.5 - 1) = -0.5
    assert directions[7].tolist() == pytest.approx([1.5, -0.5, -1.0], abs=1e-12)
    # vertical field of view: the top edge of the image sits at tan(fovy/2) * focal
    edge = pixel_directions(60.0, 1, 1000, torch.float64)[0, 1] + 0.5 / (500 / math.tan(math.radians(30)))
    assert edge.item() == pytest.approx(math.tan(math.radians(30)))


def test_a_camera_that_cannot_fit_in_memory_is_refused_before_allocating(monkeypatch):
    from canter.core import memory
    from canter.sensors.camera import WORK_BYTES_PER_PIXEL, make_camera
    from canter.sim.backend import make_simulator
    from canter.sim.config import SimCfg

    sim = make_simulator(load_model(asset_path("camera_table.xml")), 2, SimCfg(), torch.device("cpu"))
    cfg = CameraCfg(name="overhead", width=40, height=30, outputs=("depth", "rgb"))
    need = 2 * 40 * 30 * (4 + 3 + WORK_BYTES_PER_PIXEL)  # depth float32, rgb 3 x uint8, the renderer's buffers
    monkeypatch.setattr(memory, "available_bytes", lambda device: need - 1)
    with pytest.raises(ConfigError, match=r"^camera 'overhead': needs about 93\.6 kB of memory \(2 envs x 30x40 "
                                          r"pixels x ~39 bytes\), only 93\.6 kB is available on cpu$"):
        make_camera(sim, cfg)
    monkeypatch.setattr(memory, "available_bytes", lambda device: need)
    assert make_camera(sim, cfg).outputs["rgb"].shape == (2, 3, 30, 40)
