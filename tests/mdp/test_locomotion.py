"""Locomotion terms on the dog, each against its plain formula, bitwise, over a random rollout."""

from __future__ import annotations

import numpy as np
import torch

from canter.envs.manager_env import ManagerBasedRLEnv
from canter.tasks import REGISTRY


def _env(num_envs: int = 16) -> ManagerBasedRLEnv:
    cfg = REGISTRY.get("dog-flat").env_cfg()
    cfg.num_envs = num_envs
    cfg.sim.num_threads = 1
    return ManagerBasedRLEnv(cfg)


def _term(env: ManagerBasedRLEnv, name: str):
    return env.reward_manager._terms[env.reward_manager.names.index(name)]


def test_feet_air_time_and_joint_acc_are_their_plain_formulas():
    env = _env()
    env.reset()
    air_term, air_params = _term(env, "feet_air_time")
    acc_term, _ = _term(env, "joint_acc")
    touch = env.scene.names("sensor")
    feet = [env.scene.sensor_adr(name).start for name in touch if name.endswith("_touch")]
    dt = env.step_dt
    generator = torch.Generator().manual_seed(0)
    rewarded = 0
    for _ in range(40):
        # the physics part of env.step; the terms below are then the only ones to update their state
        env.action_manager.process_action(torch.rand(16, 12, generator=generator) * 2 - 1)
        env.action_manager.apply_action()
        env.sim.step(env.cfg.decimation)
        env.scene.invalidate()
        # feet air time: at a touchdown, sum over feet of (air time - 0.5 s), only when commanded to move
        air_before = air_term.air_time.clone()
        value = air_term(env, **air_params)
        contact = env.sim.sensordata[:, feet] > 1.0
        air = air_before + dt
        first_contact = (air > dt) & contact
        reward = torch.sum((air - 0.5) * first_contact.float(), dim=1)
        moving = torch.norm(env.command_manager.get_command("base_velocity")[:, :2], dim=1) > 0.1
        assert torch.equal(value, reward * moving.float())
        assert torch.equal(air_term.air_time, air.masked_fill(contact, 0.0))
        rewarded += int((value != 0).sum())
        # joint accelerations: finite difference of joint velocities over the control step
        vel_before = acc_term.prev_vel.clone()
        value = acc_term(env)
        vel = env.scene.joint_vel.float()
        assert torch.equal(value, torch.sum(((vel - vel_before) / dt) ** 2, dim=1))
        assert torch.equal(acc_term.prev_vel, vel)
    assert rewarded > 0


def test_privileged_friction_and_mass_are_nominal_then_per_env():
    env = _env(4)
    obs, _ = env.reset()
    critic = env.observation_manager.groups["critic"]
    start = sum(t.dim for t in critic[: [t.name for t in critic].index("foot_friction")])
    feet = [env.sim.model.geom(name).id for name in ("FR_foot", "FL_foot", "RR_foot", "RL_foot")]
    friction = obs["critic"][:, start : start + 4]
    mass = obs["critic"][:, start + 4]
    trunk = env.sim.model.body("trunk").id
    assert np.array_equal(friction.numpy(), np.tile(env.sim.model.geom_friction[feet, 0].astype(np.float32), (4, 1)))
    assert np.array_equal(mass.numpy(), np.full(4, env.sim.model.body_mass[trunk], dtype=np.float32))
    env.sim.expand("geom_friction")[:, feet, 0] = torch.tensor([0.3, 0.5, 0.7, 0.9], dtype=torch.float64)[:, None]
    env.sim.expand("body_mass")[:, trunk] = torch.tensor([4.0, 5.0, 6.0, 7.0], dtype=torch.float64)
    obs, *_ = env.step(torch.zeros(4, 12))
    assert torch.equal(obs["critic"][:, start : start + 4], torch.tensor([0.3, 0.5, 0.7, 0.9])[:, None].expand(4, 4))
    assert torch.equal(obs["critic"][:, start + 4], torch.tensor([4.0, 5.0, 6.0, 7.0]))


def test_bad_orientation_is_the_tilt_angle_against_the_limit():
    """The base's tilt from upright is acos(-g_z) for the projected gravity g: hand-made tilts of
    0.9, 1.1 and pi rad against limits of 1.0, pi (nothing exceeds it) and -0.1 (everything does);
    a NaN orientation never trips it."""
    import math
    from types import SimpleNamespace

    from canter import mdp

    tilts = torch.tensor([0.0, 0.9, 1.1, math.pi, float("nan")])
    gravity = torch.stack((torch.sin(tilts), torch.zeros(5), -torch.cos(tilts)), dim=1)
    env = SimpleNamespace(scene=SimpleNamespace(projected_gravity_b=gravity))
    assert mdp.bad_orientation(env, limit_angle=1.0).tolist() == [False, False, True, True, False]
    assert mdp.bad_orientation(env, limit_angle=math.pi).tolist() == [False] * 5
    assert mdp.bad_orientation(env, limit_angle=-0.1).tolist() == [True, True, True, True, False]
    # a projected gravity a rounding above unit length, upside down: the tilt is still pi, not more
    env.scene.projected_gravity_b = torch.tensor([[0.0, 0.0, 1.0000001]])
    assert mdp.bad_orientation(env, limit_angle=math.pi).tolist() == [False]
    assert mdp.bad_orientation(env, limit_angle=3.0).tolist() == [True]


def test_joint_selection_columns_index_the_scene_joint_tensors():
    """A joint selection's `columns` pick its joints out of the scene's (num_envs, num_joints)
    tensors: a slice for consecutive joints, the ids otherwise, the same columns qpos_adr names."""
    from canter import mdp
    from canter.scene.entity import Sel

    env = _env(4)
    env.reset()
    names = env.scene.names("joint")
    consecutive = Sel(kind="joint", names=tuple(names[2:5])).resolve(env.scene)
    scattered = Sel(kind="joint", names=(names[0], names[3], names[7])).resolve(env.scene)
    assert consecutive.columns == slice(2, 5)
    assert torch.equal(scattered.columns, torch.tensor([0, 3, 7]))
    for joints in (consecutive, scattered):
        expected = env.sim.qpos[:, joints.qpos_adr]
        assert torch.equal(env.scene.joint_pos[:, joints.columns], expected)
        assert torch.equal(mdp.joint_pos(env, joints), expected)


def test_body_roll_is_the_squared_sideways_tilt_and_ignores_pitch():
    """body_roll_l2 is sin^2(roll) cos^2(pitch) for hand-made roll/pitch angles (gravity in the body frame of a
    Z-Y-X rotation is (sin p, -sin r cos p, -cos r cos p)); a pure pitch costs nothing; and on the real dog, a
    trunk turned about the world's x axis (its own forward axis at yaw 0) by a reads sin^2(a), about y nothing."""
    import math
    from types import SimpleNamespace
    from typing import Any

    from canter import mdp

    roll = torch.tensor([0.0, 0.3, -0.3, 0.0, 0.5, math.pi / 2], dtype=torch.float64)
    pitch = torch.tensor([0.0, 0.0, 0.0, 0.7, -0.4, 0.0], dtype=torch.float64)
    gravity = torch.stack((torch.sin(pitch), -torch.sin(roll) * torch.cos(pitch), -torch.cos(roll) * torch.cos(pitch)), dim=1)
    env: Any = SimpleNamespace(scene=SimpleNamespace(projected_gravity_b=gravity))
    expected = [0.0, math.sin(0.3) ** 2, math.sin(0.3) ** 2, 0.0, (math.sin(0.5) * math.cos(0.4)) ** 2, 1.0]
    assert np.allclose(mdp.body_roll_l2(env).numpy(), expected, rtol=0, atol=1e-15)

    dog = _env(4)
    dog.reset()
    angles = [0.2, -0.6, 0.2, -0.6]
    for i, a in enumerate(angles):
        axis = 1 if i < 2 else 2  # about x (roll) for envs 0-1, about y (pitch) for envs 2-3
        quat = [math.cos(a / 2), 0.0, 0.0, 0.0]
        quat[axis] = math.sin(a / 2)
        dog.scene.sim.qpos[i, 3:7] = torch.tensor(quat, dtype=dog.scene.sim.qpos.dtype)
    dog.scene.invalidate()
    got = mdp.body_roll_l2(dog).double().numpy()
    assert np.allclose(got, [math.sin(0.2) ** 2, math.sin(0.6) ** 2, 0.0, 0.0], rtol=1e-6, atol=1e-12)
