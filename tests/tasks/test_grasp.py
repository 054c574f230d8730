"""arm-grasp-state: the MJCF is as written, the IK's Jacobian is MuJoCo's, actions move the tcp as
documented, the gripper holds the sphere while the arm lifts, resets place the objects apart on the
table, the success criterion counts 1 s at >= 10 cm, the expert's FSM switches phases on hand-made
states and succeeds in closed loop, and the task runs on the warp backend like on the cpu one."""

from __future__ import annotations

import importlib.util

import mujoco
import numpy as np
import pytest
import torch

from canter.envs.manager_env import ManagerBasedRLEnv
from canter.managers.term import TermCfg
from canter.sim.model import asset_path
from canter.tasks import REGISTRY
from canter.tasks.grasp import mdp as grasp
from canter.tasks.grasp.action import hinge_jacobian
from canter.tasks.grasp.expert import (
    APPROACH,
    CLOSE,
    DESCEND,
    HOLD,
    LIFT,
    GraspExpertCfg,
    GraspState,
    expert_action,
    expert_success_rate,
    phase_of,
)

TASK = "arm-grasp-state"
HAS_WARP = importlib.util.find_spec("mujoco_warp") is not None and importlib.util.find_spec("warp") is not None


@pytest.fixture(scope="module")
def model() -> mujoco.MjModel:
    return mujoco.MjModel.from_xml_path(str(asset_path("arm_grasp.xml")))


def _env(num_envs: int = 4, randomize: bool = True, backend: str = "cpu", seed: int = 0) -> ManagerBasedRLEnv:
    cfg = REGISTRY.get(TASK).env_cfg()
    cfg.num_envs = num_envs
    cfg.seed = seed
    cfg.sim.backend = backend  # type: ignore[assignment]
    cfg.sim.num_threads = 2
    if not randomize:  # the home keyframe: tcp at (0.5, 0, 0.65), the sphere 23 cm below it
        cfg.events = {}
    return ManagerBasedRLEnv(cfg)


def _body(env: ManagerBasedRLEnv, name: str) -> torch.Tensor:
    return env.sim.field("xpos")[:, env.scene.names("body").index(name)]


def _tcp(env: ManagerBasedRLEnv) -> torch.Tensor:
    return env.sim.field("site_xpos")[:, env.scene.names("site").index("tcp")]


def _yaw(env: ManagerBasedRLEnv) -> torch.Tensor:
    heading = grasp.tcp_heading(env, grasp.TCP.resolve(env.scene))
    return torch.atan2(heading[:, 1], heading[:, 0])


def _action(env: ManagerBasedRLEnv, dx=0.0, dy=0.0, dz=0.0, yaw=0.0, grip=-1.0) -> torch.Tensor:
    return torch.tensor([[dx, dy, dz, yaw, grip]], dtype=torch.float32).expand(env.num_envs, 5)


# --- the model ----------------------------------------------------------------------------------
def test_model_has_the_joints_gains_and_limits_written(model: mujoco.MjModel):
    arm = ["shoulder_pan", "shoulder_lift", "elbow", "wrist_pitch", "wrist_roll", "wrist_rotate"]
    hinge, slide, free = (int(t) for t in (mujoco.mjtJoint.mjJNT_HINGE, mujoco.mjtJoint.mjJNT_SLIDE, mujoco.mjtJoint.mjJNT_FREE))
    assert [model.joint(i).name for i in range(8)] == [*arm, "finger_left", "finger_right"]
    assert model.jnt_type.tolist() == [hinge] * 6 + [slide] * 2 + [free] * 4
    np.testing.assert_allclose(model.jnt_range[:8, 1], [2.9, 2.2, 2.7, 2.9, 2.9, 2.9, 0.04, 0.04])
    # position servos: gainprm[0] = kp, biasprm = (0, -kp, -kv); force limits N m / N
    np.testing.assert_allclose(model.actuator_gainprm[:, 0], [1200, 1200, 1200, 200, 200, 200, 500, 500])
    np.testing.assert_allclose(model.actuator_biasprm[:, 2], [-60, -60, -60, -10, -10, -10, -10, -10])
    np.testing.assert_allclose(model.actuator_forcerange[:, 1], [150, 150, 150, 28, 28, 28, 20, 20])
    assert model.body_mass[1:7].sum() == pytest.approx(9.1)  # links 1-5 and hand
    assert model.body_gravcomp[1:9].tolist() == [1.0] * 8
    # the table top and the sphere the task's terms assume
    table = model.geom("table")
    assert table.pos[2] + table.size[2] == pytest.approx(grasp.TABLE_TOP)
    assert model.geom("sphere").size[0] == pytest.approx(grasp.SPHERE_RADIUS)
    assert 60 <= float(model.cam("wrist").fovy[0]) <= 90 and model.cam("wrist").bodyid[0] == model.body("hand").id
    # every object, the table and the floor have their own colour (the ray-cast camera shades rgba)
    colours = {tuple(model.geom(n).rgba.round(3)) for n in ("sphere", "box_blue", "cylinder_green", "box_yellow", "table", "floor")}
    assert len(colours) == 6


def test_home_keyframe_points_the_gripper_down_above_the_sphere(model: mujoco.MjModel):
    data = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, data, model.key("home").id)
    mujoco.mj_forward(model, data)
    np.testing.assert_allclose(data.site("tcp").xpos, [0.5, 0.0, 0.65], atol=2e-4)
    np.testing.assert_allclose(data.site("tcp").xmat.reshape(3, 3)[:, 2], [0, 0, -1], atol=1e-4)
    # the wrist camera looks down (its -z axis), the sphere straight below it
    camera = data.cam("wrist").xmat.reshape(3, 3)
    np.testing.assert_allclose(-camera[:, 2], [0, 0.21, -0.98], atol=0.01)
    to_sphere = camera.T @ (data.body("sphere").xpos - data.cam("wrist").xpos)  # camera frame
    half_width = np.tan(np.deg2rad(model.cam("wrist").fovy[0]) / 2)
    assert np.all(np.abs(to_sphere[:2] / -to_sphere[2]) < 0.5 * half_width)  # in the middle of the image
    # after 0.5 s the arm still holds the pose (servos + gravity compensation), the four objects
    # rest on the table and nothing else touches
    mujoco.mj_step(model, data, 100)
    np.testing.assert_allclose(data.site("tcp").xpos, [0.5, 0.0, 0.65], atol=1e-3)
    pairs = {tuple(sorted((model.geom(g1).name, model.geom(g2).name))) for g1, g2 in data.contact.geom[: data.ncon]}
    assert pairs == {tuple(sorted((o, "table"))) for o in ("sphere", "box_blue", "cylinder_green", "box_yellow")}


def test_jacobian_matches_mujoco(model: mujoco.MjModel):
    data = mujoco.MjData(model)
    rng = np.random.default_rng(0)
    site = model.site("tcp").id
    for _ in range(5):
        data.qpos[:6] = rng.uniform(-1.5, 1.5, 6)
        mujoco.mj_forward(model, data)
        jacp, jacr = np.zeros((3, model.nv)), np.zeros((3, model.nv))
        mujoco.mj_jacSite(model, data, jacp, jacr, site)
        ours = hinge_jacobian(
            torch.from_numpy(data.xaxis[None, :6].copy()),
            torch.from_numpy(data.xanchor[None, :6].copy()),
            torch.from_numpy(data.site_xpos[None, site].copy()),
        )[0]
        np.testing.assert_allclose(ours.numpy(), np.vstack((jacp, jacr))[:, :6], atol=1e-12)


# --- actions and physics ------------------------------------------------------------------------
def test_actions_move_the_tcp_as_documented():
    env = _env(2, randomize=False)
    env.reset()
    start = _tcp(env).clone()
    for _ in range(10):
        env.step(_action(env, dx=1.0, dz=-0.5))
    moved = _tcp(env) - start
    # 10 steps x 1.5 cm commanded in x, half of that down, nothing in y; at speed the servos cover
    # ~63 % (x) and ~69 % (z) of each step's delta (measured 9.4 cm and 5.2 cm; see action.py)
    assert torch.all((moved[:, 0] > 0.085) & (moved[:, 0] < 0.1))
    assert torch.all((moved[:, 2] < -0.048) & (moved[:, 2] > -0.06))
    assert moved[:, 1].abs().max() < 2e-3
    approach = env.sim.field("site_xmat")[:, env.scene.names("site").index("tcp")].reshape(-1, 3, 3)[:, :, 2]
    assert torch.all(approach[:, 2] < -0.999)  # still pointing down
    before = _yaw(env)
    for _ in range(5):
        env.step(_action(env, yaw=1.0))
    turned = torch.remainder(_yaw(env) - before + torch.pi, 2 * torch.pi) - torch.pi
    assert torch.all((turned > 0.4) & (turned < 0.6))  # 5 x 0.15 rad commanded, counter-clockwise (measured 0.48)
    # the gripper command is binary: any positive value closes (finger targets -1 cm), else open (4 cm)
    for grip, target in ((0.3, -0.01), (1.0, -0.01), (0.0, 0.04), (-0.2, 0.04)):
        env.step(_action(env, grip=grip))
        assert env.sim.ctrl[:, 6:8].tolist() == [[target, target]] * 2


def test_gripper_holds_the_sphere_while_the_arm_lifts():
    env = _env(2, randomize=False)
    env.reset()
    for _ in range(30):  # down to the sphere's centre (the workspace floor stops the tcp 2.2 cm up)
        env.step(_action(env, dz=-1.0))
    assert torch.allclose(_tcp(env)[:, 2], torch.full((2,), 0.422, dtype=torch.float64), atol=2e-3)
    for _ in range(8):
        env.step(_action(env, grip=1.0))
    for _ in range(22):  # ~1 cm per step; success (1 s at >= 10 cm) would end the episode at ~30
        _, _, terminated, truncated, _ = env.step(_action(env, dz=1.0, grip=1.0))
        assert not (terminated | truncated).any()
    touch = env.sim.sensordata
    assert torch.all(touch > 10.0), "both pads squeeze the sphere (kp 500 N/m x ~3 cm)"
    lifted = _body(env, "sphere")[:, 2] - grasp.TABLE_TOP - grasp.SPHERE_RADIUS
    assert torch.all(lifted > 0.18)
    assert (_body(env, "sphere") - _tcp(env)).norm(dim=1).max() < 0.012  # slipped less than 1.2 cm
    for _ in range(10):  # open: the sphere drops back to the table
        env.step(_action(env, grip=-1.0))
    assert torch.all(_body(env, "sphere")[:, 2] < 0.5)


def test_open_gripper_lifts_nothing():
    env = _env(1, randomize=False)
    env.reset()
    for _ in range(30):
        env.step(_action(env, dz=-1.0))
    for _ in range(30):
        env.step(_action(env, dz=1.0))
    assert float(_body(env, "sphere")[0, 2]) == pytest.approx(grasp.TABLE_TOP + grasp.SPHERE_RADIUS, abs=2e-3)


def test_resets_place_the_objects_apart_on_the_table():
    env = _env(64, seed=3)
    env.reset()
    positions = grasp.body_positions(env, grasp.OBJECTS.resolve(env.scene))  # (64, 4, 3)
    gaps = (positions[:, :, None, :2] - positions[:, None, :, :2]).norm(dim=3)
    gaps = gaps + torch.eye(4, dtype=gaps.dtype) * 1.0
    assert gaps.min() >= 0.12 - 2 * 0.015 - 1e-9  # cells >= 12 cm apart, jitter 1.5 cm per axis
    assert positions[:, :, 0].min() >= 0.365 and positions[:, :, 0].max() <= 0.635
    assert positions[:, :, 1].abs().max() <= 0.165
    assert torch.allclose(positions[:, 0, 2], torch.full((64,), 0.421, dtype=torch.float64))
    assert len({tuple(p) for p in positions[:, 0, :2].round(decimals=3).tolist()}) == 64  # all different
    assert (env.sim.qvel[:, 8:]).abs().max() == 0.0
    obs, _ = env.reset()
    assert obs["policy"].shape == (64, 37)


# --- success ------------------------------------------------------------------------------------
@pytest.mark.parametrize(("height", "expected"), [(0.1005, True), (0.09, False)])
def test_success_needs_the_sphere_held_10cm_up_for_1s(height: float, expected: bool):
    env = _env(2, randomize=False)
    env.reset()
    sphere = grasp.SPHERE.resolve(env.scene)
    params = {"sphere": sphere, "height": 0.10, "hold_s": 1.0}
    term = grasp.SphereLiftedAndHeld(TermCfg(func=grasp.SphereLiftedAndHeld, params=params), env)
    env.sim.qpos[0, 10] = grasp.TABLE_TOP + grasp.SPHERE_RADIUS + height  # env 0 lifted; env 1 resting
    env.sim.forward()
    steps = round(1.0 / env.step_dt)  # 20 control steps of 50 ms
    for _ in range(steps - 1):
        assert not term(env, **params).any()
    assert term(env, **params).tolist() == [expected, False]
    env.sim.qpos[0, 10] = grasp.TABLE_TOP + grasp.SPHERE_RADIUS  # dropped: the count restarts
    env.sim.forward()
    assert not term(env, **params).any() and float(term.held_s[0]) == 0.0


# --- the expert ---------------------------------------------------------------------------------
def _state(tcp, sphere, forces=(0.0, 0.0), opening=0.04) -> GraspState:
    as_row = lambda values: torch.tensor([values], dtype=torch.float64)  # noqa: E731
    return GraspState(tcp=as_row(tcp), sphere=as_row(sphere), forces=as_row(forces),
                      opening=torch.tensor([opening], dtype=torch.float64))


def _phase(state: GraspState) -> int:
    return int(phase_of(state, GraspExpertCfg())[0])


def test_the_phase_is_a_function_of_the_state_alone():
    sphere = (0.5, 0.1, 0.42)
    assert _phase(_state((0.5, 0.1, 0.50), sphere)) == DESCEND  # 8 cm above it, fingers open
    assert _phase(_state((0.5, 0.1, 0.50), sphere, opening=0.03)) == APPROACH  # not yet open: no descent
    assert _phase(_state((0.51, 0.1, 0.50), sphere)) == APPROACH  # 1 cm off in x at hover height
    assert _phase(_state((0.5, 0.1, 0.53), sphere)) == APPROACH  # 3 cm above the hover height
    assert _phase(_state((0.5, 0.1, 0.43), sphere)) == DESCEND
    assert _phase(_state((0.51, 0.1, 0.45), sphere)) == DESCEND  # 1 cm off, below hover: corrects on the way
    assert _phase(_state((0.5, 0.13, 0.45), sphere)) == APPROACH  # 3 cm off (the sphere rolled)
    assert _phase(_state((0.5, 0.1, 0.4245), sphere)) == CLOSE  # tcp at the centre + 4.5 mm
    assert _phase(_state((0.5, 0.1, 0.4245), sphere, opening=0.025)) == CLOSE  # fingers on their way
    # shut on nothing (a student closed early or beside the sphere): reopen and go round again
    assert _phase(_state((0.5, 0.1, 0.4245), sphere, opening=0.0)) == APPROACH
    assert _phase(_state((0.5, 0.1, 0.60), sphere, opening=0.0)) == APPROACH
    # held: both pads press and the sphere is at the tcp, whatever came before; lift to tcp z 0.65
    squeezed = dict(forces=(12.0, 12.0), opening=0.0192)
    assert _phase(_state((0.5, 0.1, 0.425), sphere, **squeezed)) == LIFT
    assert _phase(_state((0.5, 0.1, 0.60), (0.5, 0.1, 0.597), **squeezed)) == LIFT
    assert _phase(_state((0.5, 0.1, 0.645), (0.5, 0.1, 0.642), **squeezed)) == HOLD
    assert _phase(_state((0.5, 0.1, 0.60), (0.5, 0.1, 0.56), **squeezed)) == APPROACH  # slipped 4 cm
    # one pad lost its grip but the sphere is still between the fingers: keep squeezing
    assert _phase(_state((0.5, 0.1, 0.65), (0.5, 0.1, 0.647), (0.5, 12.0), 0.0192)) == CLOSE


def test_actions_point_at_each_phase_target():
    sphere = (0.5, 0.1, 0.42)
    scale = 0.015

    def act(phase: int, state: GraspState) -> list[float]:
        return expert_action(torch.tensor([phase]), state, GraspExpertCfg(), scale)[0].tolist()

    assert act(APPROACH, _state((0.5, 0.095, 0.65), sphere)) == pytest.approx([0.0, 1 / 3, -1.0, 0.0, -1.0])
    # low and 5 cm away: straight up first
    assert act(APPROACH, _state((0.5, 0.05, 0.43), sphere)) == pytest.approx([0.0, 0.0, 1.0, 0.0, -1.0])
    assert act(DESCEND, _state((0.5, 0.1, 0.4325), sphere)) == pytest.approx([0.0, 0.0, -0.5, 0.0, -1.0])
    assert act(CLOSE, _state((0.5, 0.1, 0.425), sphere))[4] == 1.0
    assert act(LIFT, _state((0.49, 0.1, 0.5), sphere)) == pytest.approx([0.0, 0.0, 1.0, 0.0, 1.0])


def test_expert_grasps_and_lifts_the_sphere():
    env = _env(32, seed=1)
    expert = REGISTRY.get(TASK).expert(env)  # type: ignore[misc]
    rate, seconds = expert_success_rate(env, expert)
    assert rate >= 0.9
    assert 2.0 < seconds < 6.0


def test_the_expert_keeps_no_memory_between_calls():
    """Its label depends on the state shown, not on what it labelled before (what DAgger needs):
    a fresh expert labels a half-finished rollout exactly as the one that drove it."""
    env = _env(4, seed=2)
    expert = REGISTRY.get(TASK).expert(env)  # type: ignore[misc]
    env.reset()
    for _ in range(25):  # 1.25 s: some envs descending, some closing or lifting
        env.step(expert(env))
    driven = expert(env)
    assert len(set(expert.phase.tolist())) > 1  # type: ignore[attr-defined]
    fresh = REGISTRY.get(TASK).expert(env)  # type: ignore[misc]
    assert torch.equal(fresh(env), driven)


# --- the warp backend ---------------------------------------------------------------------------
def _warp_and_cpu(num_envs: int = 1) -> list[ManagerBasedRLEnv]:
    return [_env(num_envs, randomize=False, backend=backend) for backend in ("cpu", "warp")]


@pytest.mark.skipif(not HAS_WARP, reason="mujoco_warp not installed")
def test_warp_backend_follows_the_cpu_backend():
    """The same commands on both backends (Warp's CPU device, float32) for 0.5 s: IK, servos and
    gravity compensation agree to 1e-5 m (measured 1e-7; an action 10 % off in x moves the tcp
    4.7e-3 m away); the objects rest on the table alike."""
    cpu, warp = _warp_and_cpu(2)
    for env in (cpu, warp):
        env.reset()
        for _ in range(10):
            env.step(_action(env, dx=0.5, dy=-0.5, dz=-1.0))
    torch.testing.assert_close(_tcp(warp).double(), _tcp(cpu), atol=1e-5, rtol=0)
    torch.testing.assert_close(_body(warp, "sphere").double(), _body(cpu, "sphere"), atol=1e-5, rtol=0)


@pytest.mark.slow
@pytest.mark.skipif(not HAS_WARP, reason="mujoco_warp not installed")
def test_warp_backend_grasps_and_lifts_like_the_cpu_backend():
    """Down to the sphere, close, lift (a P-controller on the tcp) on both backends: the contacts
    (elliptic cone, condim 6 on the sphere, 4 on the pads) hold it on Warp too, at the same height
    within 2 mm. ~35 s on Warp's CPU device."""
    heights = []
    for env in _warp_and_cpu():
        env.reset()
        for steps, z, grip in ((25, 0.42, -1.0), (6, 0.42, 1.0), (12, 0.6, 1.0)):  # down, close, lift
            for _ in range(steps):
                target = torch.tensor([[0.5, 0.0, z]], dtype=torch.float64)
                dx, dy, dz = ((target - _tcp(env).double()) / 0.015).clamp(-1, 1)[0].tolist()
                env.step(_action(env, dx, dy, dz, grip=grip))
        assert bool((env.sim.sensordata > 10.0).all())
        heights.append(float(grasp.sphere_height(env, grasp.SPHERE.resolve(env.scene))[0]))
    assert heights[0] > 0.09
    assert heights[1] == pytest.approx(heights[0], abs=2e-3)
