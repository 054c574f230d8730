"""The camera observation term inside a real ObservationManager (on a stand-in env holding a cpu
simulator and its Scene): flattened channel-major images, one render per step shared by terms."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
import torch

from canter.core.errors import ConfigError
from canter.managers.observation import ObservationManager, ObsGroupCfg, ObsTermCfg
from canter.scene.scene import Scene
from canter.sensors import CameraCfg
from canter.sensors.terms import CameraImage, env_camera
from canter.sim.config import SimCfg
from canter.sim.cpu import CpuSimulator
from canter.sim.model import asset_path, load_model


@dataclass
class _Env:
    sim: CpuSimulator
    scene: Scene
    num_envs: int
    device: torch.device
    generator: torch.Generator

    def __hash__(self) -> int:  # weak-keyed like a real env (identity)
        return id(self)


def _env(num_envs: int = 2) -> _Env:
    sim = CpuSimulator(
        load_model(asset_path("camera_table.xml")), num_envs, SimCfg(backend="cpu"), torch.device("cpu")
    )
    sim.forward()
    return _Env(sim, Scene(sim), num_envs, torch.device("cpu"), torch.Generator().manual_seed(0))


def test_images_flow_through_the_observation_manager():
    env = _env()
    camera = CameraCfg(name="overhead", width=8, height=6, outputs=("depth", "rgb"))
    group = ObsGroupCfg(
        terms={
            "depth": ObsTermCfg(func=CameraImage, params={"camera": camera, "output": "depth"}),
            "rgb": ObsTermCfg(func=CameraImage, params={"camera": camera, "output": "rgb"}, scale=1 / 255),
        }
    )
    manager = ObservationManager({"policy": group}, env, console=None)  # type: ignore[arg-type]
    shared = env_camera(env, camera)  # type: ignore[arg-type]
    renders = []
    render = shared.render
    shared.render = lambda: renders.append(1) or render()  # type: ignore[method-assign]
    env.scene.invalidate()  # as after a physics step
    obs = manager.compute()["policy"]
    assert obs.shape == (2, 1 * 6 * 8 + 3 * 6 * 8) and obs.dtype == torch.float32
    assert len(renders) == 1  # both terms, one render
    depth = obs[:, :48].view(2, 1, 6, 8)
    assert torch.equal(depth, shared.outputs["depth"])
    rgb = obs[:, 48:].view(2, 3, 6, 8)
    assert torch.allclose(rgb, shared.outputs["rgb"].float() / 255)
    manager.compute()
    assert len(renders) == 1  # same step: cached
    env.scene.invalidate()
    manager.compute()
    assert len(renders) == 2


def test_an_output_the_camera_does_not_render_is_a_config_error():
    env = _env()
    group = ObsGroupCfg(
        terms={
            "seg": ObsTermCfg(
                func=CameraImage, params={"camera": CameraCfg(name="overhead"), "output": "rgb"}
            )
        }
    )
    with pytest.raises(ConfigError, match="output 'rgb' is not rendered"):
        ObservationManager({"policy": group}, env, console=None)  # type: ignore[arg-type]
