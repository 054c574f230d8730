"""Camera images as observation terms: one image term forms an image group of its own
(canter.managers.observation), (num_envs, C, H, W) in the output's dtype (uint8 RGB stays uint8).

    observations["wrist"] = ObsGroupCfg(terms={"rgb": ObsTermCfg(
        func=CameraImage, params={"camera": CameraCfg(name="wrist", outputs=("rgb",)), "output": "rgb"})})

The term renders its camera at most once per env step (the render is cached in the scene's per-step
cache, dropped by `scene.invalidate()` after every physics step and reset), and terms naming equal
CameraCfgs share one camera, so a depth and an RGB term of one camera cost one render: declare one
CameraCfg with both outputs and use it in both terms.

Noise, clip and scale apply per pixel; a history stacks frames along the channels. A policy reads
image groups through a CNN (`PolicyCfg.image_obs_groups`, canter.rl.encoders).
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

import torch

from canter.managers.term import ManagerTerm, TermCfg
from canter.sensors.camera import Camera, make_camera
from canter.sensors.camera_cfg import CameraCfg, CameraOutput

if TYPE_CHECKING:
    from canter.envs.manager_env import ManagerBasedRLEnv

_CAMERAS: weakref.WeakKeyDictionary[object, dict[str, Camera]] = weakref.WeakKeyDictionary()


def env_camera(env: ManagerBasedRLEnv, cfg: CameraCfg) -> Camera:
    """The env's camera for `cfg`, built on first use and shared by every term that asks for an
    equal CameraCfg."""
    cameras = _CAMERAS.setdefault(env, {})
    key = repr(cfg)
    if key not in cameras:
        cameras[key] = make_camera(env.sim, cfg)
    return cameras[key]


def rendered(env: ManagerBasedRLEnv, camera: Camera) -> dict[str, torch.Tensor]:
    """The camera's outputs at the env's current state, rendered at most once per step."""
    first = next(iter(camera.outputs))
    env.scene.cached(f"camera/{id(camera)}", lambda: camera.render()[first])
    return camera.outputs


class CameraImage(ManagerTerm):
    """Observation term: one output of a camera, (num_envs, C, H, W) (see module doc)."""

    def __init__(self, cfg: TermCfg, env: ManagerBasedRLEnv):
        super().__init__(cfg, env)
        self.camera = env_camera(env, cfg.params["camera"])
        self.camera.output(cfg.params.get("output", "depth"))  # a ConfigError if it is not rendered

    def __call__(
        self, env: ManagerBasedRLEnv, camera: CameraCfg, output: CameraOutput = "depth"
    ) -> torch.Tensor:
        return rendered(env, self.camera)[output]
