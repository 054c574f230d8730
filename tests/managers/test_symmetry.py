"""The left-right mirror a task declares is the physical one: the observations of a mirrored robot
(state reflected through the x-z plane, left and right joints swapped, roll/yaw joints negated,
command and last action mirrored) equal the declared mirror of the original's observations, for
the humanoid and the dog, policy and privileged critic groups; the scan's reflection; config errors."""

from __future__ import annotations

import pytest
import torch

from canter.core.errors import ConfigError
from canter.core.mirror import Mirror, mirror
from canter.envs.manager_env import ManagerBasedRLEnv
from canter.managers.symmetry import MirrorCfg, SymmetryCfg, joint_mirror, term_mirror
from canter.tasks import REGISTRY

KEEP_EVENTS = ("reset_base", "reset_joints")


def _env(task: str) -> ManagerBasedRLEnv:
    cfg = REGISTRY.get(task).env_cfg()
    cfg.num_envs = 2
    cfg.sim.num_threads = 1
    # no randomization or noise: the two envs must differ only by the mirror
    cfg.events = {name: term for name, term in cfg.events.items() if name in KEEP_EVENTS}
    for term in cfg.actions.values():
        term.max_delay_steps = 0
    for group in cfg.observations.values():
        group.enable_corruption = False
    return ManagerBasedRLEnv(cfg)


def _mirror_state(env: ManagerBasedRLEnv, joints: Mirror, actions: Mirror) -> None:
    """Env 1 becomes the mirror image of env 0."""
    qpos, qvel, scene = env.sim.qpos, env.sim.qvel, env.scene
    dtype = qpos.dtype
    flip_y = torch.tensor([1.0, -1.0, 1.0], dtype=dtype)
    qpos[1, 0:3] = qpos[0, 0:3] * flip_y
    # M R M with M = diag(1, -1, 1) is the rotation about -M axis: quaternion (w, -x, y, -z)
    qpos[1, 3:7] = qpos[0, 3:7] * torch.tensor([1.0, -1.0, 1.0, -1.0], dtype=dtype)
    qvel[1, 0:3] = qvel[0, 0:3] * flip_y  # linear velocity (world frame)
    qvel[1, 3:6] = qvel[0, 3:6] * torch.tensor([-1.0, 1.0, -1.0], dtype=dtype)  # angular (a pseudo-vector)
    qpos[1, scene.joint_qpos_adr] = mirror(qpos[0, scene.joint_qpos_adr], joints)
    qvel[1, scene.joint_dof_adr] = mirror(qvel[0, scene.joint_dof_adr], joints)
    command = env.command_manager.get_command("base_velocity")
    command[1] = command[0] * torch.tensor([1.0, -1.0, -1.0])
    # a walking clock (the humanoid's) is mirrored by swapping the legs: half a period later
    period = env.cfg.observations["policy"].terms.get("gait_clock")
    if period is not None:
        env.episode_length_buf[1] = env.episode_length_buf[0] + round(0.5 * period.params["period"] / env.step_dt)
    env.action_manager.action[1] = mirror(env.action_manager.action[0], actions)
    env.sim.forward()
    env.scene.invalidate()


@pytest.mark.parametrize("task", ["humanoid-flat", "dog-flat"])
def test_observations_of_the_mirrored_robot_are_the_declared_mirror(task: str):
    env = _env(task)
    env.reset()
    generator = torch.Generator().manual_seed(5)
    for _ in range(15):  # an asymmetric pose, on its feet, moving
        env.step(torch.rand(2, env.num_actions, generator=generator) * 2 - 1)
    symmetry = env.symmetry()
    assert symmetry is not None
    groups, actions = symmetry
    assert set(groups) == {"policy", "critic"}
    env.action_manager.action[0] = torch.rand(env.num_actions, generator=generator) * 2 - 1
    env.command_manager.get_command("base_velocity")[0] = torch.tensor([0.7, 0.3, -0.4])
    joints = joint_mirror(env.scene, env.cfg.symmetry)
    _mirror_state(env, joints, actions)
    obs = env.observation_manager.compute()
    # the states are not symmetric themselves (the mirror is not the identity) ...
    assert (obs["policy"][1] - obs["policy"][0]).abs().max() > 0.1
    touch = [env.scene.sensor_adr(name) for name in env.scene.names("sensor") if name.endswith("touch")]
    assert all(float(env.sim.sensordata[0, adr].max()) > 10.0 for adr in touch[:1])  # standing on a foot
    for group, m in groups.items():
        torch.testing.assert_close(obs[group][1], mirror(obs[group][0], m), atol=2e-4, rtol=1e-4, msg=group)


def test_joint_mirror_of_the_humanoid_pairs_limbs_and_negates_roll_and_yaw():
    env = _env("humanoid-flat")
    names = env.scene.names("joint")
    m = joint_mirror(env.scene, env.cfg.symmetry)
    pairs = {names[i]: (names[int(m.index[i])], float(m.sign[i])) for i in range(len(names))}
    assert pairs["left_hip_pitch_joint"] == ("right_hip_pitch_joint", 1.0)
    assert pairs["right_hip_roll_joint"] == ("left_hip_roll_joint", -1.0)
    assert pairs["left_ankle_roll_joint"] == ("right_ankle_roll_joint", -1.0)
    assert pairs["waist_yaw_joint"] == ("waist_yaw_joint", -1.0)
    assert pairs["left_knee_joint"] == ("right_knee_joint", 1.0)
    # a mirror applied twice is the identity
    x = torch.randn(3, len(names))
    torch.testing.assert_close(mirror(mirror(x, m), m), x)


def test_scan_mirror_reflects_the_grid_in_y():
    env = _env("humanoid-flat")
    # 3 x 3 grid, x-major: (x, y) -> (x, -y) swaps columns 0 and 2 within every row
    m = term_mirror(MirrorCfg(kind="scan"), 9, {"grid_size": (0.2, 0.2), "resolution": 0.1}, env,
                    env.cfg.symmetry, "scan")
    assert m.index.tolist() == [2, 1, 0, 5, 4, 3, 8, 7, 6] and bool((m.sign == 1).all())


def test_mirror_errors_name_the_problem():
    env = _env("humanoid-flat")
    with pytest.raises(ConfigError, match="'left_hip_pitch_joint' mirrors to 'rght_hip_pitch_joint'"):
        joint_mirror(env.scene, SymmetryCfg(pairs=(("left_", "rght_"),)))
    with pytest.raises(ConfigError, match="2 signs for 3 columns"):
        term_mirror(MirrorCfg(kind="signs", signs=(1.0, -1.0)), 3, {}, env, env.cfg.symmetry, "v")
    with pytest.raises(ConfigError, match="even number of columns"):
        term_mirror(MirrorCfg(kind="swap"), 3, {}, env, env.cfg.symmetry, "feet")
