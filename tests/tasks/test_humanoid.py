"""The humanoid: the MJCF holds the joint limits, gains and effort limits it states; the home pose
stands; every biped term equals its formula on hand-made readings; the reward weights have the
signs the task's docstring gives; humanoid-stairs has its stairs, scan and curriculum report; and a
control step on MuJoCo Warp (Warp's CPU device) matches the cpu backend."""

from __future__ import annotations

import math

import mujoco
import numpy as np
import pytest
import torch

from canter.envs.manager_env import ManagerBasedRLEnv
from canter.mdp.biped import root_height_above_ground_below
from canter.mdp.terrain import terrain_episode_metrics, terrain_levels, terrain_top_share
from canter.sim.model import asset_path
from canter.tasks import REGISTRY

# class -> (joint range, kp, kv, effort limit, armature), as the MJCF's header states them
SPEC = {
    "hip_pitch": ((-2.53, 2.88), 100, 2.5, 88, 0.025),
    "hip_roll_l": ((-0.52, 2.97), 100, 2.5, 88, 0.025),
    "hip_roll_r": ((-2.97, 0.52), 100, 2.5, 88, 0.025),
    "hip_yaw": ((-2.76, 2.76), 100, 2.5, 88, 0.01),
    "knee": ((-0.087, 2.88), 150, 4, 139, 0.025),
    "ankle_pitch": ((-0.87, 0.52), 40, 2, 50, 0.0072),
    "ankle_roll": ((-0.26, 0.26), 40, 2, 50, 0.0072),
    "waist_yaw": ((-2.62, 2.62), 100, 2.5, 88, 0.025),
    "shoulder_pitch": ((-3.09, 2.67), 40, 1, 25, 0.0036),
    "shoulder_roll_l": ((-1.59, 2.25), 40, 1, 25, 0.0036),
    "shoulder_roll_r": ((-2.25, 1.59), 40, 1, 25, 0.0036),
    "shoulder_yaw": ((-2.62, 2.62), 40, 1, 25, 0.0036),
    "elbow": ((-1.05, 2.09), 40, 1, 25, 0.0036),
}


def _class(actuator: str) -> str:
    side, _, joint = actuator.partition("_")
    if actuator == "waist_yaw":
        return "waist_yaw"
    if joint in ("hip_roll", "shoulder_roll"):
        return f"{joint}_{side[0]}"
    return joint


def _env(task: str = "humanoid-flat", num_envs: int = 4) -> ManagerBasedRLEnv:
    cfg = REGISTRY.get(task).env_cfg()
    cfg.num_envs = num_envs
    cfg.sim.num_threads = 1
    cfg.events["reset_base"].params["velocity_range"] = (0.0, 0.0)
    cfg.events["reset_joints"].params["position_range"] = (0.0, 0.0)
    return ManagerBasedRLEnv(cfg)


def _term(env: ManagerBasedRLEnv, name: str):
    return env.reward_manager._terms[env.reward_manager.names.index(name)]


def _sensor_cols(env: ManagerBasedRLEnv, name: str) -> slice:
    return env.scene.sensor_adr(name)


def test_mjcf_has_the_stated_joints_gains_effort_limits_and_masses():
    model = mujoco.MjModel.from_xml_path(str(asset_path("humanoid.xml")))
    assert model.nu == 21 and model.nq == 7 + 21
    for a in range(model.nu):
        name = model.actuator(a).name
        (low, high), kp, kv, effort, armature = SPEC[_class(name)]
        joint = model.actuator_trnid[a, 0]
        assert model.joint(joint).name == f"{name}_joint"
        np.testing.assert_allclose(model.jnt_range[joint], (low, high))
        np.testing.assert_allclose(model.actuator_ctrlrange[a], (low, high))
        # position actuator: force = kp (ctrl - q) - kv qdot, clipped to the effort limit
        assert model.actuator_gainprm[a, 0] == kp
        np.testing.assert_allclose(model.actuator_biasprm[a, :3], (0.0, -kp, -kv))
        np.testing.assert_allclose(model.actuator_forcerange[a], (-effort, effort))
        assert model.dof_armature[model.jnt_dofadr[joint]] == pytest.approx(armature)
    assert model.body_subtreemass[1] == pytest.approx(32.4)
    # left and right mirror each other: the same masses, positions mirrored in y
    for body in range(model.nbody):
        name = model.body(body).name
        if name.startswith("left_"):
            other = model.body(name.replace("left_", "right_", 1))
            assert model.body_mass[body] == pytest.approx(other.mass[0])
            np.testing.assert_allclose(model.body_pos[body] * (1, -1, 1), other.pos, atol=1e-12)


def test_home_keyframe_puts_both_soles_on_the_floor():
    model = mujoco.MjModel.from_xml_path(str(asset_path("humanoid.xml")))
    data = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, data, model.key("home").id)
    mujoco.mj_forward(model, data)
    for side in ("left", "right"):
        assert abs(data.site(f"{side}_foot_site").xpos[2]) < 1e-3
    # feet flat: hip pitch + knee + ankle pitch = 0 on each leg
    q = data.qpos[7:]
    assert q[0] + q[3] + q[4] == pytest.approx(0.0) and q[6] + q[9] + q[10] == pytest.approx(0.0)


def test_zero_action_holds_the_home_pose_for_half_a_second():
    env = _env()
    env.reset()
    for _ in range(25):
        _, _, terminated, _, _ = env.step(torch.zeros(env.num_envs, env.num_actions))
        assert not terminated.any()
    z = env.sim.qpos[:, 2]
    assert torch.all((z > 0.70) & (z < 0.76))
    for side in ("left", "right"):  # 32.4 kg (+ up to 3 kg randomized) on two feet
        assert torch.all(env.sim.sensordata[:, _sensor_cols(env, f"{side}_foot_touch")] > 50.0)


def test_single_stance_air_time_on_a_hand_made_contact_sequence():
    env = _env(num_envs=2)
    env.reset()
    term, params = _term(env, "feet_air_time")
    command = env.command_manager.get_command("base_velocity")
    command[0] = torch.tensor([0.5, 0.0, 0.0])
    command[1] = torch.tensor([0.05, 0.0, 0.3])  # standing still (|v_xy| < 0.1): never rewarded
    left, right = _sensor_cols(env, "left_foot_touch"), _sensor_cols(env, "right_foot_touch")
    dt = env.step_dt
    assert dt == pytest.approx(0.02)
    # (left, right) in contact -> the smaller time spent in the current mode, in single stance only:
    # both down; left stance 3 steps (right swings 0.02, 0.04, 0.06 s); switch (each 0.02 s in its
    # new mode); flight
    sequence = [((1, 1), 0.0), ((1, 0), 0.02), ((1, 0), 0.04), ((1, 0), 0.06), ((0, 1), 0.02), ((0, 0), 0.0)]
    for (l_down, r_down), expected in sequence:
        env.sim.sensordata[:, left] = 100.0 * l_down
        env.sim.sensordata[:, right] = 100.0 * r_down
        value = term(env, **params)
        assert value[0].item() == pytest.approx(expected, abs=1e-6)
        assert value[1].item() == 0.0
    # a long single stance is capped at the threshold, 0.4 s
    env.sim.sensordata[:, left] = 100.0
    env.sim.sensordata[:, right] = 0.0
    for _ in range(30):
        value = term(env, **params)
    assert value[0].item() == pytest.approx(0.4)
    term.reset(torch.tensor([0]))
    assert term.air_time[0].sum().item() == 0.0 and term.contact_time[0].sum().item() == 0.0


def test_feet_slide_clearance_and_posture_equal_their_formulas():
    env = _env(num_envs=2)
    env.reset()
    env.command_manager.get_command("base_velocity")[:] = torch.tensor([0.5, 0.0, 0.0])
    data = env.sim.sensordata
    data[:, _sensor_cols(env, "left_foot_touch")] = 100.0  # left: stance, slipping
    data[:, _sensor_cols(env, "right_foot_touch")] = 0.0  # right: swing
    data[:, _sensor_cols(env, "left_foot_linvel")] = torch.tensor([0.3, 0.4, 1.0], dtype=data.dtype)
    data[:, _sensor_cols(env, "right_foot_linvel")] = torch.tensor([1.0, 0.0, 0.5], dtype=data.dtype)
    data[:, _sensor_cols(env, "left_foot_pos")] = torch.tensor([0.0, 0.1, 0.1], dtype=data.dtype)
    data[:, _sensor_cols(env, "right_foot_pos")] = torch.tensor([0.2, -0.1, 0.03], dtype=data.dtype)
    env.scene.invalidate()  # hand-written readings: drop what the reset's observations cached (sole heights)
    slide, params = _term(env, "feet_slide")
    # only the foot in contact counts: |(0.3, 0.4)| = 0.5 m/s
    torch.testing.assert_close(slide(env, **params), torch.full((2,), 0.5, dtype=data.dtype))
    clearance, params = _term(env, "feet_clearance")
    # left is above 8 cm: 0; right is 5 cm short while moving at 1 m/s: 0.05^2 tanh(2)
    expected = 0.05**2 * math.tanh(2.0) + 0.02**2 * 0.0
    torch.testing.assert_close(clearance(env, **params), torch.full((2,), expected, dtype=data.dtype))
    env.command_manager.get_command("base_velocity")[1] = 0.0
    assert clearance(env, **params)[1].item() == 0.0  # standing still: not penalized
    # posture: |q - q_home| over the hip roll and yaw joints
    hips, params = _term(env, "hip_deviation")
    names = env.scene.names("joint")
    adr = {name: int(env.sim.model.jnt_qposadr[env.sim.model.joint(name).id]) for name in names}
    env.sim.qpos[0, adr["left_hip_roll_joint"]] += 0.1
    env.sim.qpos[0, adr["right_hip_yaw_joint"]] -= 0.2
    env.sim.qpos[0, adr["left_knee_joint"]] += 0.5  # not a hip roll/yaw joint: ignored
    env.scene.invalidate()
    torch.testing.assert_close(hips(env, **params), torch.tensor([0.3, 0.0], dtype=data.dtype))


def test_reward_weights_have_the_documented_signs():
    cfg = REGISTRY.get("humanoid-flat").env_cfg()
    positive = {"track_lin_vel_xy", "track_ang_vel_z", "feet_air_time", "contact_phase"}
    for name, term in cfg.rewards.items():
        assert (term.weight > 0) == (name in positive), name
    assert cfg.rewards["termination"].weight == -200.0
    # a fall costs what 2 s of perfect tracking earn: 200 x dt = (1.0 + 1.0) per second x 2 s
    tracking_per_s = cfg.rewards["track_lin_vel_xy"].weight + cfg.rewards["track_ang_vel_z"].weight
    assert -cfg.rewards["termination"].weight * 0.02 == pytest.approx(tracking_per_s * 2.0)


def test_a_fall_terminates_and_pays_the_termination_penalty():
    env = _env(num_envs=2)
    env.reset()
    # env 1 lies on its back, pelvis 12 cm above the floor
    env.sim.qpos[1, 2] = 0.12
    env.sim.qpos[1, 3:7] = torch.tensor([math.cos(math.pi / 4), 0.0, -math.sin(math.pi / 4), 0.0], dtype=env.sim.dtype)
    env.sim.forward()
    _, reward, terminated, truncated, _ = env.step(torch.zeros(2, env.num_actions))
    assert terminated.tolist() == [False, True] and not truncated.any()
    # -200 per second of the termination term, times dt, dominates the step's reward
    assert reward[1].item() < -200.0 * env.step_dt + 0.1


def test_runaway_physics_terminates_only_that_env_and_observations_and_actions_stay_bounded():
    env = _env(num_envs=4)
    env.reset()
    cfg = env.cfg
    assert cfg.clip_actions == 100.0 and all(group.clip == 100.0 for group in cfg.observations.values())
    term, params = env.termination_manager._terms[env.termination_manager.names.index("diverged")]
    # env 1: a joint at 300 rad/s (the guard: 250); env 2: the root flying at 25 m/s (guard: 20);
    # env 3: a fast but physical joint, 90 rad/s (random actions of std 3 reach 93)
    dof = int(env.scene.joint_dof_adr[3])
    env.sim.qvel[1, dof] = 300.0
    env.sim.qvel[2, 0] = 25.0
    env.sim.qvel[3, dof] = 90.0
    env.scene.invalidate()
    assert term(env, **params).tolist() == [False, True, True, False]
    obs, _, terminated, _, _ = env.step(torch.full((4, env.num_actions), 1e8))
    assert terminated[1] and terminated[2]
    assert env.action_manager.action.abs().max().item() == 100.0
    assert all(value.abs().max().item() <= 100.0 for value in obs.values())


def test_stairs_terrain_scan_fall_test_and_top_third_report():
    env = _env("humanoid-stairs", num_envs=8)
    obs, _ = env.reset()
    terrain = env.terrain
    assert terrain is not None
    assert set(env.cfg.terrain.sub_terrains) == {"flat", "rough", "stairs_up", "stairs_down"}
    assert obs["policy"].shape[1] == 77 + 17 * 11  # the flat task's 77 + a 1.6 x 1.0 m scan at 0.1 m
    # the fall test measures from the ground under the robot: 0.6 m above a stair is standing
    xy = terrain.env_origins[:, :2].to(env.sim.dtype)
    ground = terrain.height_at(xy.float()).to(env.sim.dtype)
    env.sim.qpos[:, :2] = xy
    env.sim.qpos[:, 2] = ground + torch.where(torch.arange(8) % 2 == 0, 0.6, 0.3).to(env.sim.dtype)
    env.scene.invalidate()
    assert root_height_above_ground_below(env, 0.45).tolist() == [False, True] * 4
    # the report: the share of envs on levels 7, 8, 9 of 10
    terrain.terrain_levels[:] = torch.tensor([0, 3, 6, 7, 7, 8, 9, 2])
    assert terrain_top_share(env, torch.arange(8)).item() == pytest.approx(4 / 8)
    assert "terrain_top_third" in env.cfg.curriculum


def test_stairs_episode_metrics_are_the_distance_walked_and_the_promotion_rule():
    env = _env("humanoid-stairs", num_envs=4)
    env.reset()
    terrain = env.terrain
    assert terrain is not None and terrain.cfg.size[0] == 8.0
    # robots 0.5, 3.9, 4.1 and 6 m from their origins (a block is 8 m: out of it beyond 4 m)
    offsets = torch.tensor([[0.3, 0.4], [0.0, 3.9], [4.1, 0.0], [3.6, 4.8]], dtype=env.sim.dtype)
    env.sim.qpos[:, :2] = terrain.env_origins[:, :2].to(env.sim.dtype) + offsets
    env.scene.invalidate()
    env.episode_length_buf[:] = 10
    terrain.terrain_levels[:] = 3
    terrain_levels(env, torch.arange(4))
    metrics = terrain_episode_metrics(env)
    assert metrics["distance_walked"].tolist() == pytest.approx([0.5, 3.9, 4.1, 6.0], abs=1e-5)
    assert metrics["walked_out"].tolist() == [0.0, 0.0, 1.0, 1.0]
    # the same rule promoted the last two; the first two stayed or were demoted (by their commands)
    assert terrain.terrain_levels[2:].tolist() == [4, 4] and (terrain.terrain_levels[:2] <= 3).all()
    assert REGISTRY.get("humanoid-stairs").episode_metrics is terrain_episode_metrics


def _load_state(sim, state: dict[str, torch.Tensor]) -> None:
    sim.reset()
    for name, value in state.items():
        view = getattr(sim, name) if name != "qacc_warmstart" else sim.field(name)
        view.copy_(value.to(view.dtype))
    sim.forward()


@pytest.mark.parametrize("cone", ["elliptic", "pyramidal"])
def test_a_control_step_on_warp_matches_the_cpu_backend(cone: str):
    """Single-step parity, warp on Warp's CPU device (float32) against MuJoCo C (float64), from the
    same float32 states: standing on both feet, perturbed, half the robots lifted into the air. With
    the elliptic cone the step agrees to the tolerance of canter.bench.gpu_parity (qpos 1e-4 +
    1e-4|q|, qvel 1e-2 + 1e-3|v|; measured 3.6e-7 and 2.5e-5); the asset's pyramidal cone lays its
    edges along different tangent directions in the two engines (tests/sim/test_warp.py), so there
    the contact and constraint sets must agree, and the robots in the air agree to the same
    tolerance. (With the 6 Newton iterations the model first had, the grounded robots differed by
    0.5 rad/s: the 8-point foot contacts had not converged; the MJCF now allows 15.)"""
    pytest.importorskip("warp")
    pytest.importorskip("mujoco_warp")
    from canter.bench.gpu_parity import QPOS_TOL, QVEL_TOL
    from canter.sim.config import SimCfg
    from canter.sim.cpu import CpuSimulator
    from canter.sim.model import load_model
    from canter.sim.warp import WarpSimulator

    cpu_device = torch.device("cpu")
    model = load_model(asset_path("humanoid.xml"))
    if cone == "elliptic":
        model.opt.cone = mujoco.mjtCone.mjCONE_ELLIPTIC
    n, decimation = 8, 4
    generator = torch.Generator().manual_seed(3)
    source = CpuSimulator(model, n, SimCfg(num_threads=1), cpu_device)
    home = torch.as_tensor(model.key("home").qpos)
    source.qpos.copy_(home)
    source.qpos[:, 7:] += 0.05 * torch.randn(n, model.nu, generator=generator, dtype=torch.float64)
    source.ctrl.copy_(torch.as_tensor(model.key("home").ctrl))
    source.step(40)  # settle onto the feet
    source.qpos[1::2, 2] += 0.2  # lift half into the air
    low, high = torch.as_tensor(model.actuator_ctrlrange, dtype=torch.float32).T
    state = {
        "qpos": source.qpos.float(),
        "qvel": (source.qvel + 0.2 * torch.randn(source.qvel.shape, generator=generator, dtype=torch.float64)).float(),
        "qacc_warmstart": source.field("qacc_warmstart").float(),
        "ctrl": low + (high - low) * torch.rand(n, model.nu, generator=generator),
    }
    cpu = CpuSimulator(model, n, SimCfg(num_threads=1), cpu_device)
    warp = WarpSimulator(model, n, SimCfg(backend="warp"), cpu_device)
    # bound before the calls: the cpu backend's outputs fill on the next one
    cpu_nefc, cpu_ncon = cpu.field("nefc"), cpu.field("ncon")
    for sim in (cpu, warp):
        _load_state(sim, state)
    assert torch.equal(warp.field("nefc"), cpu_nefc), "different contact/constraint sets"
    in_contact = cpu_ncon.flatten() > 0
    assert in_contact[0::2].all() and not in_contact[1::2].any()
    for sim in (cpu, warp):
        sim.step(decimation)
    assert not warp.nonfinite.any()
    rows = slice(None) if cone == "elliptic" else slice(1, None, 2)
    for name, (atol, rtol) in (("qpos", QPOS_TOL), ("qvel", QVEL_TOL)):
        expected = getattr(cpu, name)[rows]
        torch.testing.assert_close(getattr(warp, name)[rows].double(), expected, atol=atol, rtol=rtol)


def test_gait_clock_and_contact_phase_by_hand():
    from canter.mdp.biped import feet_contact_phase, gait_clock, gait_phase
    from canter.scene.entity import sensors

    env = _env(num_envs=3)
    env.reset()
    # 0.8 s period at 50 Hz: steps 0, 10, 30 are phases 0, 0.25, 0.75 of the left leg
    env.episode_length_buf[:] = torch.tensor([0, 10, 30])
    phase = gait_phase(env, 0.8)
    torch.testing.assert_close(phase, torch.tensor([[0.0, 0.5], [0.25, 0.75], [0.75, 0.25]]))
    torch.testing.assert_close(gait_clock(env, 0.8), torch.tensor([[0.0, 1.0], [1.0, 0.0], [-1.0, 0.0]]), atol=1e-6, rtol=0)
    feet = sensors("left_foot_touch", "right_foot_touch").resolve(env.scene)
    left, right = _sensor_cols(env, "left_foot_touch"), _sensor_cols(env, "right_foot_touch")
    # expected stance (phase < 0.55): env 0 (L, R) = (yes, yes), env 1 (yes, no), env 2 (no, yes)
    env.sim.sensordata[:, left] = torch.tensor([[100.0], [100.0], [100.0]], dtype=env.sim.dtype)
    env.sim.sensordata[:, right] = torch.tensor([[0.0], [0.0], [0.0]], dtype=env.sim.dtype)
    command = env.command_manager.get_command("base_velocity")
    command[:] = torch.tensor([0.5, 0.0, 0.0])
    # walking: +1 per matching foot, -1 per other: env 0 (match, miss), env 1 (match, match), env 2 (miss, miss)
    assert feet_contact_phase(env, feet, 0.8, "base_velocity").tolist() == [0.0, 2.0, -2.0]
    command[1] = 0.0  # a standing command: feet on the ground, whatever the clock says
    assert feet_contact_phase(env, feet, 0.8, "base_velocity").tolist() == [0.0, 1.0, -2.0]
    # swing height: the feet the clock has in swing (env 1: right; env 2: left) below 8 cm pay (0.08 - h)^2
    from canter.mdp.biped import feet_swing_height

    positions = sensors("left_foot_pos", "right_foot_pos").resolve(env.scene)
    data = env.sim.sensordata
    data[:, _sensor_cols(env, "left_foot_pos")] = torch.tensor([0.0, 0.1, 0.02], dtype=data.dtype)
    data[:, _sensor_cols(env, "right_foot_pos")] = torch.tensor([0.0, -0.1, 0.05], dtype=data.dtype)
    env.scene.invalidate()
    command[1] = 0.5
    swing = feet_swing_height(env, positions, 0.8, 0.08, "base_velocity")
    torch.testing.assert_close(swing, torch.tensor([0.0, 0.03**2, 0.06**2], dtype=data.dtype))
    command[:] = 0.0
    assert feet_swing_height(env, positions, 0.8, 0.08, "base_velocity").abs().sum().item() == 0.0
