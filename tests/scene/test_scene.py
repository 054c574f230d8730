"""The scene: body-frame quantities are the plain rotations, nominal model fields are the model's."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from canter.core.errors import ConfigError
from canter.core.math import quat_rotate_inverse
from canter.scene.scene import Scene
from canter.sim.config import SimCfg
from canter.sim.cpu import CpuSimulator
from canter.sim.model import asset_path, load_model


def _scene(num_envs: int = 16) -> Scene:
    model = load_model(asset_path("dog.xml"), (), None)
    return Scene(CpuSimulator(model, num_envs, SimCfg(num_threads=1), torch.device("cpu")))


def test_body_frame_velocity_and_gravity_are_each_the_plain_rotation():
    scene = _scene()
    generator = torch.Generator().manual_seed(0)
    quat = torch.randn(16, 4, generator=generator, dtype=torch.float64)
    scene.sim.qpos[:, 3:7] = quat / quat.norm(dim=1, keepdim=True)
    scene.sim.qvel[:, 0:3] = torch.randn(16, 3, generator=generator, dtype=torch.float64)
    scene.invalidate()
    quat = scene.sim.qpos[:, 3:7]
    down = torch.tensor([0.0, 0.0, -1.0], dtype=torch.float64).expand(16, 3)
    assert torch.equal(scene.root_lin_vel_b, quat_rotate_inverse(quat, scene.sim.qvel[:, 0:3]))
    assert torch.equal(scene.projected_gravity_b, quat_rotate_inverse(quat, down))
    # cached until invalidated: a new state shows after invalidate() only
    scene.sim.qvel[:, 0:3] += 1.0
    assert not torch.equal(scene.root_lin_vel_b, quat_rotate_inverse(quat, scene.sim.qvel[:, 0:3]))
    scene.invalidate()
    assert torch.equal(scene.root_lin_vel_b, quat_rotate_inverse(quat, scene.sim.qvel[:, 0:3]))


def test_model_field_is_the_compiled_models_values_in_the_sim_dtype():
    scene = _scene(4)
    mass = scene.model_field("body_mass")
    assert mass.dtype == torch.float64 and np.array_equal(mass.numpy(), scene.model.body_mass)
    assert scene.model_field("body_mass") is mass  # built once
    assert scene.model_field("geom_friction").shape == (scene.model.ngeom, 3)
    scene.sim.expand("body_mass")[:, 1] = 99.0  # per-env values do not move the nominal ones
    assert np.array_equal(scene.model_field("body_mass").numpy(), scene.model.body_mass)
    assert scene.model_field("jnt_type").dtype == torch.int32
    with pytest.raises(ConfigError, match="no_such_field"):
        scene.model_field("no_such_field")
