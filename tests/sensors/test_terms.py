"""The camera observation term inside a real ObservationManager (on a stand-in env holding a cpu
simulator and its Scene): image groups (num_envs, C, H, W), uint8 RGB kept, one render per step
shared by the terms of one camera."""

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
    groups = {
        "policy": ObsGroupCfg(terms={"depth": ObsTermCfg(func=CameraImage, params={"camera": camera, "output": "depth"})}),
        "rgb": ObsGroupCfg(terms={"rgb": ObsTermCfg(func=CameraImage, params={"camera": camera, "output": "rgb"})}),
    }
    manager = ObservationManager(groups, env, console=None)  # type: ignore[arg-type]
    assert manager.group_shapes == {"policy": (1, 6, 8), "rgb": (3, 6, 8)}
    assert manager.group_dtypes == {"policy": torch.float32, "rgb": torch.uint8}
    shared = env_camera(env, camera)  # type: ignore[arg-type]
    renders = []
    render = shared.render
    shared.render = lambda: renders.append(1) or render()  # type: ignore[method-assign]
    env.scene.invalidate()  # as after a physics step
    obs = manager.compute()
    assert len(renders) == 1  # both terms, one render
    assert torch.equal(obs["policy"], shared.outputs["depth"])
    assert torch.equal(obs["rgb"], shared.outputs["rgb"])
    assert obs["rgb"].data_ptr() != shared.outputs["rgb"].data_ptr()  # a copy: the next render reuses the buffer
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
