"""The cpu camera on the table scene: depths, geom ids and colors checked against geometry by hand.

Scene (canter/assets/camera_table.xml): camera 'overhead' at (0, 0, 1.2) looking straight down
(fovy 60), table top surface at z = 0.40, floor at z = 0, ball of radius 0.02, one directional
light along (-0.2, 0.3, -1) with diffuse 0.8, headlight ambient 0.25.
"""

from __future__ import annotations

import math

import mujoco
import pytest
import torch

from canter.sensors import CameraCfg, make_camera
from canter.sensors.cpu_camera import CpuCamera
from canter.sim.config import SimCfg
from canter.sim.cpu import CpuSimulator
from canter.sim.model import asset_path, load_model

CPU = torch.device("cpu")
ALL = ("depth", "rgb", "segmentation")


def _sim(num_envs: int = 3) -> CpuSimulator:
    return CpuSimulator(load_model(asset_path("camera_table.xml")), num_envs, SimCfg(backend="cpu"), CPU)


def _geom(sim: CpuSimulator, name: str) -> int:
    return mujoco.mj_name2id(sim.model, mujoco.mjtObj.mjOBJ_GEOM, name)


def _place_ball(sim: CpuSimulator, env: int, xyz: tuple[float, float, float]) -> None:
    joint = mujoco.mj_name2id(sim.model, mujoco.mjtObj.mjOBJ_JOINT, "ball")
    adr = int(sim.model.jnt_qposadr[joint])
    sim.qpos[env, adr : adr + 3] = torch.tensor(xyz, dtype=torch.float64)


def test_shapes_dtypes_and_factory():
    sim = _sim(2)
    camera = make_camera(sim, CameraCfg(name="overhead", width=24, height=16, outputs=ALL))
    assert isinstance(camera, CpuCamera)
    out = camera.render()
    assert out["depth"].shape == (2, 1, 16, 24) and out["depth"].dtype == torch.float32
    assert out["rgb"].shape == (2, 3, 16, 24) and out["rgb"].dtype == torch.uint8
    assert out["segmentation"].shape == (2, 1, 16, 24) and out["segmentation"].dtype == torch.int32


def test_depth_is_planar_and_segmentation_names_the_geom():
    sim = _sim(1)
    out = make_camera(sim, CameraCfg(name="overhead", width=33, height=33, outputs=ALL)).render()
    depth, seg = out["depth"][0, 0], out["segmentation"][0, 0]
    # centre pixel looks straight down at the table top: 1.2 - 0.40
    assert depth[16, 16].item() == pytest.approx(0.8, abs=1e-6)
    assert seg[16, 16].item() == _geom(sim, "table_top")
    # corner pixels see the floor, ~37 deg off axis: planar depth 1.2 (the ray itself is longer)
    assert depth[0, 0].item() == pytest.approx(1.2, abs=1e-6)
    assert seg[0, 0].item() == _geom(sim, "floor")


def test_moving_the_ball_changes_only_its_env():
    sim = _sim(2)
    _place_ball(sim, 1, (0.0, 0.0, 0.5))  # on the optical axis, centre 0.7 below the camera
    sim.forward()
    out = make_camera(sim, CameraCfg(name="overhead", width=33, height=33, outputs=ALL)).render()
    # env 1: the ball's top at 1.2 - (0.5 + 0.02) = 0.68; env 0 still sees the table
    assert out["depth"][1, 0, 16, 16].item() == pytest.approx(0.68, abs=1e-6)
    assert out["segmentation"][1, 0, 16, 16].item() == _geom(sim, "ball")
    assert out["depth"][0, 0, 16, 16].item() == pytest.approx(0.8, abs=1e-6)
    # the ball (radius 0.02 at depth 0.68) spans 2 * 0.02 / 0.68 * f pixels, f = 16.5 / tan(30 deg)
    focal = 16.5 / math.tan(math.radians(30))
    width = int((out["segmentation"][1, 0, 16] == _geom(sim, "ball")).sum())
    assert abs(width - 2 * 0.02 / 0.68 * focal) <= 1.0
    # everything outside the ball's two footprints is identical in both envs
    ball = (out["segmentation"] == _geom(sim, "ball")).any(dim=0)
    assert int(ball.sum()) > 2 * width
    assert torch.equal(out["depth"][0][~ball], out["depth"][1][~ball])


def test_oblique_camera_centre_ray_meets_the_table():
    sim = _sim(1)
    out = make_camera(sim, CameraCfg(name="oblique", width=33, height=33, outputs=ALL)).render()
    # xyaxes x = (1, 1, 0)/sqrt2, y = (-0.45, 0.45, 0.77): optical axis -x × y, unit
    x = torch.tensor([0.7071, 0.7071, 0.0], dtype=torch.float64)
    y = torch.tensor([-0.45, 0.45, 0.77], dtype=torch.float64)
    x, y = x / x.norm(), y - (y @ x) * x
    axis = -torch.linalg.cross(x, y / y.norm())
    # from z = 0.95 down to the table top (z = 0.40) along the unit axis: planar depth = distance
    expected = (0.95 - 0.40) / -axis[2].item()
    assert out["depth"][0, 0, 16, 16].item() == pytest.approx(expected, abs=1e-4)
    assert out["segmentation"][0, 0, 16, 16].item() == _geom(sim, "table_top")


def test_far_clips_misses_and_rgb_is_lambert():
    sim = _sim(1)
    out = make_camera(sim, CameraCfg(name="overhead", width=33, height=33, far=1.0, outputs=ALL)).render()
    # the floor (depth 1.2) lies beyond far = 1.0: background
    assert out["depth"][0, 0, 0, 0].item() == 1.0
    assert out["segmentation"][0, 0, 0, 0].item() == -1
    assert out["rgb"][0, :, 0, 0].tolist() == [0, 0, 0]
    # table top: rgb (0.62, 0.45, 0.30) × (0.25 + 0.8 · n·l), n = +z, l = (0.2, -0.3, 1)/|.|
    light = 0.25 + 0.8 / math.sqrt(0.2**2 + 0.3**2 + 1.0)
    expected = [round(c * light * 255) for c in (0.62, 0.45, 0.30)]
    assert out["rgb"][0, :, 16, 16].tolist() == expected


@pytest.mark.parametrize("use_kernel", [True, False])
def test_per_env_field_of_view(use_kernel):
    sim = _sim(2)
    _place_ball(sim, 0, (0.0, 0.0, 0.5))
    _place_ball(sim, 1, (0.0, 0.0, 0.5))
    sim.expand("cam_fovy")[1, 0] = 30.0  # env 0 keeps 60 deg
    sim.forward()
    camera = CpuCamera(sim, CameraCfg(name="overhead", width=65, height=65, outputs=ALL), use_kernel)
    out = camera.render()
    widths = (out["segmentation"][:, 0, 32] == _geom(sim, "ball")).sum(dim=1).tolist()
    # the ball (radius 0.02, top at depth 0.68) spans about 2 * 0.02 / 0.68 * f pixels, f = 32.5 / tan(fovy/2)
    for width, fovy in zip(widths, (60.0, 30.0), strict=True):
        assert abs(width - 2 * 0.02 / 0.68 * 32.5 / math.tan(math.radians(fovy / 2))) <= 1.0
    # the table's corner leaves the narrower view: fewer floor pixels in env 1
    floor = (out["segmentation"] == _geom(sim, "floor")).flatten(1).sum(dim=1)
    assert floor[1] == 0 < floor[0]


@pytest.mark.parametrize("use_kernel", [True, False])
def test_a_surface_nearer_than_near_reads_as_a_miss(use_kernel):
    sim = _sim(1)
    _place_ball(sim, 0, (0.0, 0.0, 1.15))  # its top 0.03 below the camera
    sim.forward()
    camera = CpuCamera(
        sim, CameraCfg(name="overhead", width=33, height=33, near=0.05, outputs=ALL), use_kernel
    )
    out = camera.render()
    assert out["depth"][0, 0, 16, 16].item() == 10.0 and out["segmentation"][0, 0, 16, 16].item() == -1
    out = CpuCamera(sim, CameraCfg(name="overhead", width=33, height=33, near=0.02), use_kernel).render()
    assert out["depth"][0, 0, 16, 16].item() == pytest.approx(0.03, abs=1e-6)


def test_per_env_colors_follow_expanded_geom_rgba():
    sim = _sim(2)
    rgba = sim.expand("geom_rgba")
    rgba[1, _geom(sim, "table_top")] = torch.tensor([0.0, 1.0, 0.0, 1.0], dtype=rgba.dtype)
    out = make_camera(sim, CameraCfg(name="overhead", width=33, height=33, outputs=("rgb",))).render()
    light = 0.25 + 0.8 / math.sqrt(0.2**2 + 0.3**2 + 1.0)
    assert out["rgb"][1, :, 16, 16].tolist() == [0, min(255, round(light * 255)), 0]
    assert out["rgb"][0, :, 16, 16].tolist() == [round(c * light * 255) for c in (0.62, 0.45, 0.30)]


_PRIMITIVES = """
<mujoco>
  <worldbody>
    <camera name="eye" pos="0 0 2.5" fovy="70"/>
    <geom name="floor" type="plane" size="0 0 1" rgba="0.5 0.5 0.5 1"/>
    <geom name="mat" type="plane" pos="0.6 0 0.05" size="0.3 0.2 1" rgba="0.2 0.2 0.8 1"/>
    <geom name="ghost" type="sphere" pos="0 0 1.5" size="0.3" rgba="1 1 1 0"/>
    <geom name="hidden" type="box" pos="0 0 1.5" size="0.3 0.3 0.3" group="4"/>
    <body name="a"><freejoint/><geom type="sphere" size="0.15"/></body>
    <body name="b"><freejoint/><geom type="capsule" size="0.08 0.25"/></body>
    <body name="c"><freejoint/><geom type="ellipsoid" size="0.2 0.1 0.06"/></body>
    <body name="d"><freejoint/><geom type="cylinder" size="0.12 0.2"/></body>
    <body name="e"><freejoint/><geom type="box" size="0.2 0.1 0.05"/></body>
    <body name="f"><freejoint/><geom type="box" size="0.1 0.1 0.1"/></body>
  </worldbody>
</mujoco>
"""


_LIGHTS = {
    "default": "",
    "point and directional": '<light pos="0.5 0.5 3" type="point" diffuse="0.5 0.4 0.3"/>'
    '<light dir="0.3 0 -1" type="directional" diffuse="0.3 0.3 0.3" ambient="0.1 0.1 0.1"/>',
}


@pytest.mark.parametrize("lights", list(_LIGHTS))
def test_kernel_matches_batch_ray_on_every_primitive(lights):
    """The C kernel (ray casting and shading) against mj_ray (Batch.ray) and the torch shading, on
    planes (infinite, finite), spheres, capsules, ellipsoids, cylinders and boxes in random poses,
    some near the camera, under the default light or a point and a directional light; an invisible
    (alpha 0) geom and a geom of group 4 are skipped by both."""
    model = mujoco.MjModel.from_xml_string(
        _PRIMITIVES.replace("<worldbody>", "<worldbody>" + _LIGHTS[lights])
    )
    sim = CpuSimulator(model, 8, SimCfg(backend="cpu"), CPU)
    generator = torch.Generator().manual_seed(0)
    for body in range(6):
        adr = 7 * body
        sim.qpos[:, adr : adr + 3] = (torch.rand(8, 3, generator=generator, dtype=torch.float64) - 0.5) * 1.6
        sim.qpos[:, adr + 2] += 1.0  # heights 0.2 .. 1.8 below a camera at 2.5
        quat = torch.randn(8, 4, generator=generator, dtype=torch.float64)
        sim.qpos[:, adr + 3 : adr + 7] = quat / quat.norm(dim=1, keepdim=True)
    sim.forward()
    cfg = CameraCfg(name="eye", width=64, height=48, near=0.05, outputs=ALL)
    kernel = CpuCamera(sim, cfg)
    assert kernel.path == "kernel"
    got = {key: value.clone() for key, value in kernel.render().items()}
    reference = CpuCamera(sim, cfg, use_kernel=False)
    assert reference.path == "batch_ray"
    want = reference.render()
    same = got["segmentation"] == want["segmentation"]
    assert same.float().mean().item() >= 0.999
    assert (got["depth"] - want["depth"])[same].abs().max().item() <= 1e-5
    assert (got["rgb"].int() - want["rgb"].int())[same.expand_as(got["rgb"])].abs().max().item() <= 1
    types = {int(model.geom_type[g]) for g in want["segmentation"].unique().tolist() if g >= 0}
    assert len(types) == 6  # every primitive type is on screen somewhere
    for name in ("ghost", "hidden"):
        assert not (want["segmentation"] == mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, name)).any()
