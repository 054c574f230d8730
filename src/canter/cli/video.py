"""Offscreen video of env 0 with MuJoCo's renderer (EGL), written as mp4 by imageio-ffmpeg."""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path
from typing import Any

import mujoco
import numpy as np

from canter.core.errors import CanterError
from canter.core.files import WriteError, atomic_write, remove_stale_scratch, scratch_path, write_failure
from canter.envs.manager_env import ManagerBasedRLEnv

STRIP_FRAMES = 8
# a video that could not be written is put down to a full disk when fewer bytes than this are free
VIDEO_MIN_FREE = 1 << 20
# heightfield drawn around env 0 in a terrain video (m, half-width) and how near its edge env 0 may come
TERRAIN_HALF = 16.0
TERRAIN_MARGIN = 6.0


class _Recorder:
    """Appends frames to the mp4 writer; with keep_every > 0 also keeps every keep_every-th frame
    (at most STRIP_FRAMES) for a frame strip. The video is written to a hidden file beside `path` and
    moved onto it by `close()`, so a video already at `path` stays until a new one replaces it whole;
    `discard()` (a play that failed) drops the new one."""

    writer: Any
    path: Path
    staged: Path

    @property
    def _staged_kind(self) -> str:
        return f".partial{self.path.suffix}"

    def __init__(self) -> None:
        self.frames = 0
        self.keep_every = 0
        self.kept: list[np.ndarray] = []

    def _open(self, macro_block_size: int) -> None:
        try:
            import imageio.v2 as imageio
        except ImportError as err:
            raise CanterError("writing video needs imageio and imageio-ffmpeg (pip install imageio imageio-ffmpeg)") from err
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # where the video is written until `close()`: hidden, beside `path`, with its suffix (ffmpeg picks the
        # container by it) and this process's id, so that the next video of `path` removes what a recorder
        # killed outright (kill -9) left
        remove_stale_scratch(self.path, (self._staged_kind,))
        self.staged = scratch_path(self.path, self._staged_kind)
        # ffmpeg's own log stays quiet (a failure is one line of ours) unless CANTER_DEBUG asks for it
        self.writer = imageio.get_writer(str(self.staged), fps=self.fps, codec="libx264", quality=7,
                                         macro_block_size=macro_block_size,
                                         ffmpeg_log_level="warning" if os.environ.get("CANTER_DEBUG") else "quiet")

    def _finish(self, keep: bool) -> Path:
        try:
            self.writer.close()
        except Exception:
            if keep:
                raise
        if not self.staged.exists():  # no frame was written: ffmpeg never started, and there is no file
            return self.path
        if keep and not complete_mp4(self.staged):  # ffmpeg could not finish it (a full disk): it is not kept
            self.staged.unlink()
            raise WriteError(self._failure("ffmpeg could not finish the file"))
        if keep:
            os.replace(self.staged, self.path)
        else:
            self.staged.unlink()
        return self.path

    def _failure(self, reason: str) -> str:
        """Why the video could not be written: a full disk (named with the bytes free), else `reason`."""
        try:
            full = shutil.disk_usage(self.path.parent).free < VIDEO_MIN_FREE
        except OSError:
            full = False
        return write_failure(self.path, OSError(errno.ENOSPC if full else errno.EIO, reason))

    def discard(self) -> None:
        """Closes the writer and drops the video written so far (whatever was at `path` stays)."""
        self._finish(keep=False)

    def _append(self, frame: np.ndarray) -> None:
        try:
            self.writer.append_data(frame)
        except OSError as err:  # ffmpeg stopped (a full disk): its message is the whole command and log
            raise WriteError(self._failure("ffmpeg stopped writing it")) from err
        if self.keep_every and self.frames % self.keep_every == 0 and len(self.kept) < STRIP_FRAMES:
            self.kept.append(frame.copy())
        self.frames += 1


def complete_mp4(path: Path) -> bool:
    """Whether the file is a whole MP4: its top-level boxes (ISO BMFF: a 32-bit size, or 1 and a
    64-bit size, or 0 for "to the end", then the type) tile the file exactly and include the media
    data and the index (`moov`, which ffmpeg writes last: a file cut short has none)."""
    size = path.stat().st_size
    kinds, position = set(), 0
    with open(path, "rb") as handle:
        while position + 8 <= size:
            handle.seek(position)
            header = handle.read(16)
            box, kind = int.from_bytes(header[:4], "big"), header[4:8]
            if box == 1 and len(header) == 16:
                box = int.from_bytes(header[8:16], "big")
            elif box == 0:
                box = size - position
            if box < 8 or position + box > size:
                return False
            kinds.add(kind)
            position += box
    return position == size and {b"mdat", b"moov"} <= kinds


def write_frame_strip(frames: list[np.ndarray], path: Path) -> Path:
    """The frames side by side, 4 px of white between them, as one PNG."""
    import imageio.v2 as imageio

    if not frames:
        raise CanterError("--strip: no frames were recorded")
    gap = np.full((frames[0].shape[0], 4, 3), 255, dtype=np.uint8)
    parts = [part for frame in frames for part in (frame, gap)][:-1]
    with atomic_write(path) as tmp:
        imageio.imwrite(str(tmp), np.concatenate(parts, axis=1), format="png")
    return path


def shadow_map_size(model_size: int, width: int, height: int) -> int:
    """The shadow map side a video of width x height renders with: the smallest power of two of at least
    twice the frame's longer side (and 1024), never more than the model asks for. MuJoCo's default of
    4096 costs a software renderer (llvmpipe, a machine without a GPU) a third of a frame: a 640 x 480
    frame renders 1.25-1.7x faster with 2048, its pixels within 0.08 grey levels on average (BENCHMARKS.md
    §9, "Filming on a CPU")."""
    side = 1024
    while side < 2 * max(width, height):
        side *= 2
    return min(model_size, side)


class VideoRecorder(_Recorder):
    """Video of env 0 through a camera of the model. On a heightfield terrain the rendered ground is
    the part within TERRAIN_HALF m of env 0 (cut afresh when env 0 comes within TERRAIN_MARGIN m of
    the cut's edge, walking or moved by a reset): the whole field is drawn triangle by triangle by a
    software renderer, its shadow pass again, and a camera that follows the robot sees a few blocks."""

    def __init__(self, env: ManagerBasedRLEnv, path: str, width: int, height: int, camera: str | None):
        if camera is not None and mujoco.mj_name2id(env.sim.model, mujoco.mjtObj.mjOBJ_CAMERA, camera) < 0:
            from canter.sensors.camera_cfg import camera_listing

            raise CanterError(f"--camera: the model has no camera named {camera!r} "
                              f"(its cameras: {camera_listing(env.sim.model)})")
        self.env = env
        self.path = Path(path)
        self.fps = 1.0 / env.step_dt
        self.width, self.height = width, height
        super().__init__()
        terrain = env.terrain
        self.cropped = terrain is not None and terrain.map is not None
        if self.cropped:
            self._cut_ground(env.sim.qpos[0, :2])
        else:
            self._build(env.sim.model)
        self.camera = camera if camera is not None else (0 if self.model.ncam > 0 else -1)
        self._open(macro_block_size=8)

    def _build(self, model: mujoco.MjModel) -> None:
        model.vis.global_.offwidth = max(model.vis.global_.offwidth, self.width)
        model.vis.global_.offheight = max(model.vis.global_.offheight, self.height)
        model.vis.quality.shadowsize = shadow_map_size(model.vis.quality.shadowsize, self.width, self.height)
        if getattr(self, "renderer", None) is not None:
            self.renderer.close()
        try:
            self.renderer = mujoco.Renderer(model, self.height, self.width)
        except Exception as err:
            raise CanterError(f"offscreen rendering is unavailable ({' '.join(str(err).split())}); "
                              "install libegl1 and libegl-mesa0, or set MUJOCO_GL=osmesa with libosmesa6") from err
        self.model = model
        self.data = mujoco.MjData(model)

    def _cut_ground(self, xy: Any) -> None:
        """Renders from now on the env's model with its heightfield cut to TERRAIN_HALF m around
        world xy (the root's position: a free joint's first two coordinates)."""
        from functools import partial

        from canter.sim.model import load_model

        cfg, terrain = self.env.cfg, self.env.terrain
        assert terrain is not None
        self.window_center = xy.detach().cpu().numpy().astype(np.float64)  # a copy: not a view of qpos
        edit = partial(terrain.edit_spec, window=(*self.window_center.tolist(), TERRAIN_HALF))
        self._build(load_model(cfg.model_path, (*cfg.spec_edits, edit)))

    def capture(self) -> None:
        sim = self.env.sim
        if self.cropped:
            xy = sim.qpos[0, :2]
            if np.abs(xy.detach().cpu().numpy() - self.window_center).max() > TERRAIN_HALF - TERRAIN_MARGIN:
                self._cut_ground(xy)
        self.data.qpos[:] = sim.qpos[0].detach().cpu().numpy()
        self.data.qvel[:] = sim.qvel[0].detach().cpu().numpy()
        mujoco.mj_forward(self.model, self.data)
        self.renderer.update_scene(self.data, camera=self.camera)
        self._append(np.asarray(self.renderer.render()))

    def close(self) -> Path:
        self.renderer.close()
        return self._finish(keep=True)

    def discard(self) -> None:
        self.renderer.close()
        super().discard()


class FrameVideoRecorder(_Recorder):
    """Video of env 0 from an env's own image observations (an Atari game's newest 84x84 frame,
    scaled up by `scale` with nearest-neighbour pixels), written as mp4 at the env's step rate."""

    def __init__(self, env, path: str, group: str = "policy", scale: int = 4):
        self.env, self.group, self.scale = env, group, scale
        self.path = Path(path)
        self.fps = 1.0 / env.step_dt
        super().__init__()
        self._open(macro_block_size=4)

    def capture(self) -> None:
        frame = self.env.get_observations()[self.group][0, -1].detach().cpu().numpy()
        frame = np.kron(frame, np.ones((self.scale, self.scale), dtype=frame.dtype))
        self._append(np.repeat(frame[..., None], 3, axis=2))

    def close(self) -> Path:
        return self._finish(keep=True)


def recorder_for(env: Any, path: str, width: int, height: int, camera: str | None) -> VideoRecorder | FrameVideoRecorder:
    """The recorder that films env 0: MuJoCo's renderer through `camera` for a robot, the env's own
    frames for an Atari game (which has no camera: `camera` is then a one-line error)."""
    if isinstance(env, ManagerBasedRLEnv):
        return VideoRecorder(env, path, width, height, camera)
    if camera is not None:
        raise CanterError("--camera: an Atari game is filmed from its own frames; there is no camera to choose")
    return FrameVideoRecorder(env, path)
