"""Offscreen video of env 0 with MuJoCo's renderer (EGL), written as mp4 by imageio-ffmpeg."""

from __future__ import annotations

from pathlib import Path

import mujoco
import numpy as np

from canter.core.errors import CanterError
from canter.envs.manager_env import ManagerBasedRLEnv


class VideoRecorder:
    def __init__(self, env: ManagerBasedRLEnv, path: str, width: int, height: int, camera: str | None):
        self.env = env
        self.path = Path(path)
        self.fps = 1.0 / env.step_dt
        self.frames = 0
        model = env.sim.model
        model.vis.global_.offwidth = max(model.vis.global_.offwidth, width)
        model.vis.global_.offheight = max(model.vis.global_.offheight, height)
        try:
            self.renderer = mujoco.Renderer(model, height, width)
        except Exception as err:
            raise CanterError(f"offscreen rendering is unavailable ({' '.join(str(err).split())}); "
                              "install libegl1 and libegl-mesa0, or set MUJOCO_GL=osmesa with libosmesa6") from err
        self.camera = camera if camera is not None else (0 if model.ncam > 0 else -1)
        self.data = mujoco.MjData(model)
        try:
            import imageio.v2 as imageio
        except ImportError as err:
            raise CanterError("writing video needs imageio and imageio-ffmpeg (pip install imageio imageio-ffmpeg)") from err
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.writer = imageio.get_writer(str(self.path), fps=self.fps, codec="libx264", quality=7, macro_block_size=8)

    def capture(self) -> None:
        sim = self.env.sim
        self.data.qpos[:] = sim.qpos[0].detach().cpu().numpy()
        self.data.qvel[:] = sim.qvel[0].detach().cpu().numpy()
        mujoco.mj_forward(sim.model, self.data)
        self.renderer.update_scene(self.data, camera=self.camera)
        self.writer.append_data(np.asarray(self.renderer.render()))
        self.frames += 1

    def close(self) -> Path:
        self.writer.close()
        self.renderer.close()
        return self.path


class FrameVideoRecorder:
    """Video of env 0 from an env's own image observations (an Atari game's newest 84x84 frame,
    scaled up by `scale` with nearest-neighbour pixels), written as mp4 at the env's step rate."""

    def __init__(self, env, path: str, group: str = "policy", scale: int = 4):
        try:
            import imageio.v2 as imageio
        except ImportError as err:
            raise CanterError("writing video needs imageio and imageio-ffmpeg (pip install imageio imageio-ffmpeg)") from err
        self.env, self.group, self.scale = env, group, scale
        self.path = Path(path)
        self.fps = 1.0 / env.step_dt
        self.frames = 0
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.writer = imageio.get_writer(str(self.path), fps=self.fps, codec="libx264", quality=7, macro_block_size=4)

    def capture(self) -> None:
        frame = self.env.get_observations()[self.group][0, -1].detach().cpu().numpy()
        frame = np.kron(frame, np.ones((self.scale, self.scale), dtype=frame.dtype))
        self.writer.append_data(np.repeat(frame[..., None], 3, axis=2))
        self.frames += 1

    def close(self) -> Path:
        self.writer.close()
        return self.path
