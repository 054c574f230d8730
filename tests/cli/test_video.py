"""The video recorder's terrain window: the heightfield a video draws is cut around env 0 and cut
afresh where env 0 walks towards the cut's edge (no GL needed: the renderer is replaced by a stub
that records what it was built for)."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import pytest
import torch

from canter.cli import video
from canter.envs.manager_env import ManagerBasedRLEnv
from canter.tasks import REGISTRY


class _StubRenderer:
    built: ClassVar[list] = []

    def __init__(self, model, height: int, width: int):
        self.model, self.shape = model, (height, width, 3)
        _StubRenderer.built.append(self)

    def update_scene(self, data, camera=None) -> None:
        self.qpos = data.qpos.copy()

    def render(self) -> np.ndarray:
        return np.zeros(self.shape, dtype=np.uint8)

    def close(self) -> None:
        pass


@pytest.fixture
def stub_renderer(monkeypatch):
    _StubRenderer.built = []
    monkeypatch.setattr(video.mujoco, "Renderer", _StubRenderer)
    return _StubRenderer.built


def test_a_terrain_video_draws_the_ground_around_env_0_and_follows_it(tmp_path, stub_renderer):
    cfg = REGISTRY.get("dog-rough").env_cfg()
    cfg.num_envs = 2
    env = ManagerBasedRLEnv(cfg)
    env.reset()
    with torch.no_grad():
        env.sim.qpos[0, :2] = 0.0  # the map's centre: the window is not clipped by the map's edge
    full = env.sim.model
    recorder = video.VideoRecorder(env, str(tmp_path / "v.mp4"), 64, 48, None)
    first = stub_renderer[-1].model
    assert env.terrain is not None and env.terrain.map is not None
    half, cells = video.TERRAIN_HALF, round(2 * video.TERRAIN_HALF / env.terrain.map.horizontal_scale)
    # a window of 2 x 16 m at 0.1 m: 321 or 322 grid points each way, of the full field's 3 x as many or more
    assert cells <= int(first.hfield_nrow[0]) <= cells + 2 and cells <= int(first.hfield_ncol[0]) <= cells + 2
    assert int(full.hfield_nrow[0]) > 3 * cells
    np.testing.assert_allclose(recorder.window_center, env.sim.qpos[0, :2].numpy())
    recorder.capture()
    assert len(stub_renderer) == 1  # env 0 at the centre: no new cut
    np.testing.assert_array_equal(stub_renderer[-1].qpos, env.sim.qpos[0].numpy())
    with torch.no_grad():  # env 0 a little off the centre, then near the edge (margin crossed)
        env.sim.qpos[0, 0] += half - video.TERRAIN_MARGIN - 0.5
    recorder.capture()
    assert len(stub_renderer) == 1
    with torch.no_grad():
        env.sim.qpos[0, 1] -= half - video.TERRAIN_MARGIN + 0.5
    recorder.capture()
    assert len(stub_renderer) == 2 and stub_renderer[-1].model is not first
    np.testing.assert_allclose(recorder.window_center, env.sim.qpos[0, :2].numpy())
    assert recorder.frames == 3
    recorder.close()


def test_a_flat_task_renders_its_own_model(tmp_path, stub_renderer):
    cfg = REGISTRY.get("cartpole").env_cfg()
    cfg.num_envs = 2
    env = ManagerBasedRLEnv(cfg)
    recorder = video.VideoRecorder(env, str(tmp_path / "v.mp4"), 64, 48, None)
    assert stub_renderer[-1].model is env.sim.model
    assert env.sim.model.vis.quality.shadowsize == 1024  # a 64 x 48 video needs no 4096 shadow map
    recorder.capture()
    assert recorder.frames == 1
    recorder.close()


def test_the_shadow_map_follows_the_frame_size_up_to_the_models_own():
    assert video.shadow_map_size(4096, 64, 48) == 1024
    assert video.shadow_map_size(4096, 640, 480) == 2048  # twice the longer side, rounded up to a power of two
    assert video.shadow_map_size(4096, 1280, 720) == 4096
    assert video.shadow_map_size(4096, 3840, 2160) == 4096  # never more than the model asks for
    assert video.shadow_map_size(512, 640, 480) == 512


def test_an_unknown_camera_is_one_error_naming_the_models_cameras(tmp_path, stub_renderer):
    cfg = REGISTRY.get("cartpole").env_cfg()
    cfg.num_envs = 1
    env = ManagerBasedRLEnv(cfg)
    with pytest.raises(video.CanterError, match=r"^--camera: the model has no camera named 'nosuch' \(its cameras: front\)$"):
        video.VideoRecorder(env, str(tmp_path / "v.mp4"), 64, 48, "nosuch")
    assert stub_renderer == [] and not (tmp_path / "v.mp4").exists()  # refused before rendering or writing
    video.VideoRecorder(env, str(tmp_path / "v.mp4"), 64, 48, "front").close()
    assert stub_renderer[-1].model is env.sim.model
    assert env.sim.model.vis.quality.shadowsize == 1024  # a 64 x 48 video needs no 4096 shadow map


def _frames_env():
    """What FrameVideoRecorder reads of an env: the step rate and an image group (an Atari game's)."""
    from types import SimpleNamespace

    frames = torch.arange(4 * 84 * 84, dtype=torch.int64).reshape(1, 4, 84, 84).remainder(256).to(torch.uint8)
    return SimpleNamespace(step_dt=1.0 / 15.0, get_observations=lambda: {"policy": frames})


def test_a_video_that_ffmpeg_could_not_finish_is_an_error_and_the_previous_one_stays(tmp_path, monkeypatch):
    import errno

    from canter.core.files import WriteError

    path = tmp_path / "v.mp4"
    recorder = video.FrameVideoRecorder(_frames_env(), str(path))
    for _ in range(5):
        recorder.capture()
    assert recorder.close() == path and video.complete_mp4(path)
    data = path.read_bytes()
    for cut in (len(data) - 1, len(data) // 2, 7):  # a file cut short (a full disk) has no index, or half a box
        (tmp_path / "cut.mp4").write_bytes(data[:cut])
        assert not video.complete_mp4(tmp_path / "cut.mp4")
    (tmp_path / "cut.mp4").unlink()

    recorder = video.FrameVideoRecorder(_frames_env(), str(path))  # ffmpeg ends, but the file is not whole
    recorder.capture()
    monkeypatch.setattr(video, "complete_mp4", lambda _: False)
    with pytest.raises(WriteError, match=r"^cannot write .*v\.mp4: ffmpeg could not finish the file$"):
        recorder.close()
    monkeypatch.undo()
    assert path.read_bytes() == data and [p.name for p in tmp_path.iterdir()] == ["v.mp4"]

    recorder = video.FrameVideoRecorder(_frames_env(), str(path))  # ffmpeg stops mid-video
    recorder.capture()

    def stopped(frame):
        raise OSError(errno.EPIPE, "Broken pipe\n\nFFMPEG COMMAND:\nffmpeg -y ...")

    monkeypatch.setattr(recorder.writer, "append_data", stopped)
    with pytest.raises(WriteError, match=r"^cannot write .*v\.mp4: ffmpeg stopped writing it$"):
        recorder.capture()
    recorder.discard()  # what play and deploy do with a run that failed
    assert path.read_bytes() == data and [p.name for p in tmp_path.iterdir()] == ["v.mp4"]
