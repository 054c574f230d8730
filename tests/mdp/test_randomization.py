"""Domain randomization terms (canter.mdp.randomization) and the action manager's actuator latency.

For each term: drawn values lie in the configured range, differ between envs, leave the rows of
envs not drawn bitwise untouched (model fields and state), and change what the physics does (cpu
backend). One parametrized test runs every term on the warp backend and compares the written model
fields with the cpu backend's for the same seed. Action delay: with delay d the ctrl written at
step t is exactly the action of step t - d; delay 0 is bitwise the undelayed env.

Envs are the Canter dog (src/canter/assets/dog.xml) standing in its "home" keyframe, driven by
position targets home + action (scale 1), 4 physics steps of 5 ms per control step.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
import torch

from canter import mdp
from canter.core.errors import ConfigError
from canter.envs.env_cfg import EnvCfg
from canter.envs.manager_env import ManagerBasedRLEnv
from canter.managers.event import EventTermCfg
from canter.managers.observation import ObsGroupCfg, ObsTermCfg
from canter.managers.termination import TerminationTermCfg
from canter.mdp.actions import joint_position_action
from canter.scene.entity import Sel, actuators, bodies, geoms
from canter.sim.config import SimCfg
from canter.sim.model import asset_path
from canter.tasks.ant.env_cfg import ant_env_cfg

MAX_DELAY = 3


def dog_cfg(
    num_envs: int = 4,
    backend: str = "cpu",
    max_delay: int = MAX_DELAY,
    events: dict[str, EventTermCfg] | None = None,
    episode_length_s: float = 100.0,
) -> EnvCfg:
    return EnvCfg(
        model_path=str(asset_path("dog.xml")),
        default_keyframe="home",
        num_envs=num_envs,
        decimation=4,
        episode_length_s=episode_length_s,
        sim=SimCfg(backend=backend, num_threads=1),  # type: ignore[arg-type]
        actions={"joint_pos": joint_position_action(scale=1.0, max_delay_steps=max_delay)},
        observations={"policy": ObsGroupCfg(terms={"joint_pos": ObsTermCfg(func=mdp.joint_pos_rel)})},
        terminations={"time_out": TerminationTermCfg(func=mdp.time_out, time_out=True)},
        events=events or {},
    )


def make_env(**kwargs: Any) -> ManagerBasedRLEnv:
    env = ManagerBasedRLEnv(dog_cfg(**kwargs))
    env.reset()
    return env


def resolve(env: ManagerBasedRLEnv, params: dict[str, Any]) -> dict[str, Any]:
    return {k: v.resolve(env.scene) if isinstance(v, Sel) else v for k, v in params.items()}


def run(env: ManagerBasedRLEnv, steps: int, action: torch.Tensor | None = None) -> None:
    action = torch.zeros(env.num_envs, env.num_actions) if action is None else action
    for _ in range(steps):
        env.step(action)


def ids(*values: int) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.long)


@dataclass
class Case:
    func: Any
    params: dict[str, Any]
    fields: tuple[str, ...]  # model fields the term writes
    ranges: dict[str, tuple[float, float]]  # randomization_state key -> range of the drawn values


CASES = {
    "friction": Case(
        mdp.randomize_friction,
        {"geoms": geoms(".*_foot"), "friction_range": (0.3, 1.2)},
        ("geom_friction",),
        {"friction": (0.3, 1.2)},
    ),
    "added_mass": Case(
        mdp.randomize_added_mass,
        {"bodies": bodies("trunk", ".*_thigh"), "mass_range": (-0.5, 3.0)},
        ("body_mass", "body_inertia"),
        {"added_mass": (-0.5, 3.0)},
    ),
    "com_offset": Case(
        mdp.randomize_com_offset,
        {"bodies": bodies("trunk"), "offset_range": (-0.05, 0.05)},
        ("body_ipos",),
        {"com_offset": (-0.05, 0.05)},
    ),
    "inertia_scale": Case(
        mdp.randomize_inertia_scale,
        {"bodies": bodies("trunk", ".*_hip"), "scale_range": (0.5, 1.5)},
        ("body_inertia",),
        {"inertia_scale": (0.5, 1.5)},
    ),
    "pd_gains": Case(
        mdp.randomize_pd_gains,
        {"actuators": actuators(), "kp_scale_range": (0.8, 1.2), "kd_scale_range": (0.5, 2.0)},
        ("actuator_gainprm", "actuator_biasprm"),
        {"pd_gains/kp_scale": (0.8, 1.2), "pd_gains/kd_scale": (0.5, 2.0)},
    ),
    "motor_strength": Case(
        mdp.randomize_motor_strength,
        {"actuators": actuators(".*_calf", ".*_thigh"), "scale_range": (0.7, 1.3)},
        ("actuator_forcerange",),
        {"motor_strength": (0.7, 1.3)},
    ),
    "action_delay": Case(
        mdp.randomize_action_delay, {"delay_range": (1, MAX_DELAY)}, (), {"action_delay": (1, 3)}
    ),
}
NEUTRAL = {"added_mass": 0.0, "com_offset": 0.0, "action_delay": 0.0}  # others: scale 1, or nominal friction


def snapshot(env: ManagerBasedRLEnv) -> dict[str, torch.Tensor]:
    state = env.sim.get_state()
    state["delay"] = env.action_manager.delay.clone()
    return state


def assert_rows_untouched(env: ManagerBasedRLEnv, before: dict[str, torch.Tensor], rows: list[int]) -> None:
    """Rows `rows` of every per-env tensor (state, model fields, delays) are bitwise as before; fields
    expanded since `before` are compared with the model's nominal values."""
    after = snapshot(env)
    for key, value in after.items():
        if value.dim() == 0:
            continue
        if key in before:
            old = before[key][rows]
        else:
            name = key.removeprefix("model/")
            nominal = torch.as_tensor(getattr(env.sim.model, name), dtype=value.dtype)
            old = nominal.expand(len(rows), *nominal.shape)
        assert torch.equal(value[rows], old), f"{key}: rows {rows} changed"


@pytest.mark.parametrize("case_name", list(CASES))
def test_drawn_values_are_in_range_per_env_and_touch_only_env_ids(case_name: str):
    case = CASES[case_name]
    env = make_env(num_envs=8)
    for name in case.fields:  # expanded before the snapshot, so rows can be compared bitwise
        env.sim.expand(name)
    before = snapshot(env)
    drawn = [0, 2, 3, 5, 6, 7]
    case.func(env, ids(*drawn), **resolve(env, case.params))
    assert_rows_untouched(env, before, [1, 4])
    for key, (low, high) in case.ranges.items():
        values = env.randomization_state[key]
        assert values.shape[0] == 8
        assert bool((values[drawn] >= low).all()) and bool((values[drawn] <= high).all()), key
        per_env = values[drawn].reshape(len(drawn), -1)
        distinct = torch.unique(per_env, dim=0).shape[0]
        assert distinct >= (2 if case_name == "action_delay" else len(drawn)), key  # integers repeat
        neutral = NEUTRAL.get(key, 1.0)
        if key == "friction":
            neutral = float(env.sim.model.geom_friction[env.sim.model.geom("FR_foot").id, 0])
        assert bool((values[[1, 4]] == neutral).all()), key
        log = env.extras["log"]
        for stat in ("mean", "min", "max", "std"):
            assert f"Randomization/{key}/{stat}" in log
        # over every env, the ones not drawn included
        torch.testing.assert_close(log[f"Randomization/{key}/mean"], values.float().mean())
        torch.testing.assert_close(log[f"Randomization/{key}/max"], values.float().max())
    for name in case.fields:  # drawn rows were written
        assert not torch.equal(env.sim.expand(name)[drawn], before[f"model/{name}"][drawn]), name
    if case_name == "action_delay":
        assert not torch.equal(env.action_manager.delay[drawn], before["delay"][drawn])
    run(env, 2)
    assert not bool(env.sim.nonfinite.any())


# --------------------------------------------------------------------- the physics sees the values


def test_friction_changes_how_far_the_dog_slides():
    env = make_env()
    feet = resolve(env, {"g": geoms(".*_foot")})["g"]
    mdp.randomize_friction(env, ids(0, 1), feet, (0.05, 0.05))
    mdp.randomize_friction(env, ids(2, 3), feet, (1.5, 1.5))
    friction = env.sim.expand("geom_friction")[:, feet.ids, 0]
    torch.testing.assert_close(
        friction, torch.tensor([[0.05] * 4, [0.05] * 4, [1.5] * 4, [1.5] * 4]).double()
    )
    run(env, 25)  # settle on the feet
    start = env.sim.qpos[:, 0].clone()
    env.sim.qvel[:, 0] = 1.0  # shove the trunk forward at 1 m/s
    run(env, 15)
    slid = env.sim.qpos[:, 0] - start
    assert bool((slid[:2] > 1.5 * slid[2:]).all()), slid  # measured: 0.28 m vs 0.13 m


def test_added_mass_makes_the_trunk_sink_and_scales_its_inertia():
    env = make_env()
    trunk = resolve(env, {"b": bodies("trunk")})["b"]
    model = env.sim.model
    i = model.body("trunk").id
    mdp.randomize_added_mass(env, ids(2, 3), trunk, (8.0, 8.0))
    mass = env.sim.expand("body_mass")[:, i]
    torch.testing.assert_close(
        mass, torch.tensor([0.0, 0.0, 8.0, 8.0], dtype=torch.float64) + model.body_mass[i]
    )
    ratio = (model.body_mass[i] + 8.0) / model.body_mass[i]
    torch.testing.assert_close(
        env.sim.expand("body_inertia")[2, i], torch.as_tensor(model.body_inertia[i] * ratio)
    )
    run(env, 50)
    height = env.sim.qpos[:, 2]
    assert float(height[0] - height[2]) > 0.02, height  # measured: 0.250 m vs 0.204 m


def test_com_offset_moves_the_centre_of_mass_the_physics_uses():
    env = make_env()
    trunk = resolve(env, {"b": bodies("trunk")})["b"]
    i = env.sim.model.body("trunk").id
    mdp.randomize_com_offset(env, ids(1), trunk, (0.06, 0.06))
    xipos, xpos = env.sim.field("xipos"), env.sim.field("xpos")  # bound before the call that fills them
    env.sim.forward()
    # the home pose has an identity trunk orientation: xipos - xpos is body_ipos in the world frame
    com = xipos[:, i] - xpos[:, i]
    nominal = torch.as_tensor(env.sim.model.body_ipos[i])
    torch.testing.assert_close(com[0], nominal)
    torch.testing.assert_close(com[1], nominal + 0.06)
    run(env, 50)
    # a CoM moved forward, left and up loads the front legs: the nose dips (pitch about +y)
    pitch = lambda q: 2 * (q[:, 0] * q[:, 2] - q[:, 3] * q[:, 1])  # noqa: E731 (sin of the pitch)
    quat = env.sim.qpos[:, 3:7]
    assert float(pitch(quat)[1] - pitch(quat)[0]) > 0.01, pitch(quat)


def test_inertia_scale_slows_spin_and_composes_with_added_mass():
    env = make_env()
    trunk = resolve(env, {"b": bodies("trunk")})["b"]
    model = env.sim.model
    i = model.body("trunk").id
    mdp.randomize_inertia_scale(env, ids(1), trunk, (3.0, 3.0))
    env.sim.qpos[:, 2] = 1.0  # in the air: no contacts
    env.sim.forward()
    env.sim.xfrc_applied[:, i, 5] = 2.0  # yaw torque, N m
    env.sim.step(1)
    yaw_rate = env.sim.qvel[:, 5]
    assert float(yaw_rate[1]) < 0.85 * float(yaw_rate[0]), yaw_rate  # legs add inertia that is not scaled
    # whichever order: inertia = nominal * (mass / nominal mass) * scale
    mdp.randomize_added_mass(env, ids(1), trunk, (2.0, 2.0))
    mdp.randomize_inertia_scale(env, ids(1), trunk, (0.5, 0.5))
    mdp.randomize_added_mass(env, ids(1), trunk, (4.0, 4.0))
    expected = model.body_inertia[i] * (model.body_mass[i] + 4.0) / model.body_mass[i] * 0.5
    torch.testing.assert_close(env.sim.expand("body_inertia")[1, i], torch.as_tensor(expected))


def actuator_force_at(env: ManagerBasedRLEnv, error: float, joint_vel: float) -> torch.Tensor:
    """actuator_force after forward() with every target `error` rad away and every joint moving."""
    q = env.sim.qpos[:, 7:].clone()
    env.sim.ctrl[:] = q + error
    env.sim.qvel[:, 6:] = joint_vel
    force = env.sim.field("actuator_force")  # bound before the call that fills it
    env.sim.forward()
    return force.clone()


def test_pd_gains_are_the_gains_mujoco_applies():
    env = make_env()
    model = env.sim.model
    everything = resolve(env, {"a": actuators()})["a"]
    mdp.randomize_pd_gains(env, ids(1, 2, 3), everything, (0.5, 2.0), (0.5, 2.0))
    kp = torch.as_tensor(model.actuator_gainprm[:, 0]) * env.randomization_state["pd_gains/kp_scale"]
    kv = torch.as_tensor(-model.actuator_biasprm[:, 2]) * env.randomization_state["pd_gains/kd_scale"]
    gainprm, biasprm = env.sim.expand("actuator_gainprm"), env.sim.expand("actuator_biasprm")
    torch.testing.assert_close(gainprm[..., 0], kp)
    torch.testing.assert_close(biasprm[..., 1], -kp)  # the target stays ctrl
    torch.testing.assert_close(biasprm[..., 2], -kv)
    force = actuator_force_at(env, error=0.1, joint_vel=1.0)  # below every force limit
    torch.testing.assert_close(force, kp * 0.1 - kv * 1.0)
    # stiffer servos hold the standing pose closer to its targets under the dog's weight
    env = make_env()
    mdp.randomize_pd_gains(env, ids(0, 1), everything, (0.5, 0.5), (1.0, 1.0))
    mdp.randomize_pd_gains(env, ids(2, 3), everything, (2.0, 2.0), (1.0, 1.0))
    run(env, 50)
    sag = (env.sim.qpos[:, 7:] - env.sim.ctrl).abs().sum(dim=1)
    assert bool((sag[:2] > 2 * sag[2:]).all()), sag


def test_motor_strength_scales_the_servo_force_limit():
    env = make_env()
    model = env.sim.model
    everything = resolve(env, {"a": actuators()})["a"]
    mdp.randomize_motor_strength(env, ids(1, 2, 3), everything, (0.5, 1.5))
    scale = env.randomization_state["motor_strength"]
    limit = torch.as_tensor(model.actuator_forcerange[:, 1]) * scale
    torch.testing.assert_close(env.sim.expand("actuator_forcerange")[..., 1], limit)
    torch.testing.assert_close(env.sim.expand("actuator_forcerange")[..., 0], -limit)
    # -kv * qdot = 0.5 * 200 = 100 N m, beyond 1.5 * 35.55 (a target error would be clipped to ctrlrange)
    force = actuator_force_at(env, error=0.0, joint_vel=-200.0)
    torch.testing.assert_close(force, limit)
    assert bool((force[1:] != force[0]).any())


def test_motor_strength_scales_the_gear_of_plain_motors():
    cfg = ant_env_cfg()
    cfg.num_envs = 3
    cfg.sim.num_threads = 1
    env = ManagerBasedRLEnv(cfg)
    env.reset()
    motors = resolve(env, {"a": actuators()})["a"]
    mdp.randomize_motor_strength(env, ids(1, 2), motors, (0.5, 1.5))
    scale = env.randomization_state["motor_strength"]
    gear = env.sim.model.actuator_gear[:, 0]
    torch.testing.assert_close(env.sim.expand("actuator_gear")[..., 0], torch.as_tensor(gear) * scale)
    env.sim.ctrl[:] = 0.5
    joint_torque = env.sim.field("qfrc_actuator")  # bound before the call that fills it
    env.sim.forward()
    dof = torch.as_tensor([env.sim.model.jnt_dofadr[env.sim.model.actuator_trnid[a, 0]] for a in range(8)])
    torch.testing.assert_close(joint_torque[:, dof], 0.5 * torch.as_tensor(gear) * scale)


def test_terms_reject_wrong_ranges_and_actuators():
    env = make_env()
    feet = resolve(env, {"g": geoms(".*_foot")})["g"]
    with pytest.raises(ConfigError, match=r"randomize_friction: friction_range needs 0.0 <= low <= high"):
        mdp.randomize_friction(env, ids(0), feet, (-0.1, 1.0))
    with pytest.raises(ConfigError, match="exceeds the action history"):
        mdp.randomize_action_delay(env, ids(0), (0, MAX_DELAY + 1))
    with pytest.raises(ConfigError, match="randomize_added_mass: bodies must select body names"):
        mdp.randomize_added_mass(env, ids(0), feet, (0.0, 1.0))
    cfg = ant_env_cfg()
    cfg.num_envs = 1
    ant = ManagerBasedRLEnv(cfg)
    with pytest.raises(ConfigError, match="'fl_hip' is not a position actuator"):
        mdp.randomize_pd_gains(ant, ids(0), resolve(ant, {"a": actuators()})["a"], (0.5, 2.0))


# --------------------------------------------------------------------------------- action delay


def test_delayed_ctrl_is_exactly_the_action_of_d_steps_ago():
    env = make_env()
    for i in range(4):  # env i: delay i
        mdp.randomize_action_delay(env, ids(i), (i, i))
    assert env.action_manager.delay.tolist() == [0, 1, 2, 3]
    home = torch.as_tensor(env.sim.model.key_qpos[env.sim.model.key("home").id, 7:])
    generator = torch.Generator().manual_seed(3)
    actions = [0.1 * torch.randn(4, 12, generator=generator) for _ in range(8)]
    for t, action in enumerate(actions):
        env.step(action)
        torch.testing.assert_close(env.action_manager.action, action, rtol=0, atol=0)  # the policy's latest
        for i in range(4):
            given = actions[t - i][i] if t >= i else torch.zeros(12)
            assert torch.equal(env.sim.ctrl[i], home + given.double()), (t, i)


def test_delay_zero_is_bitwise_the_undelayed_env():
    plain = make_env(max_delay=0)
    delayed = make_env(max_delay=MAX_DELAY)
    assert plain.action_manager.max_delay == 0 and delayed.action_manager.max_delay == MAX_DELAY
    generator = torch.Generator().manual_seed(4)
    for _ in range(6):
        action = 0.2 * torch.randn(4, 12, generator=generator)
        plain.step(action)
        delayed.step(action)
    assert torch.equal(plain.sim.ctrl, delayed.sim.ctrl)
    assert torch.equal(plain.sim.qpos, delayed.sim.qpos) and torch.equal(plain.sim.qvel, delayed.sim.qvel)


def test_reset_clears_the_history_and_state_dict_restores_it():
    env = make_env()
    manager = env.action_manager
    manager.delay[:] = 2
    generator = torch.Generator().manual_seed(5)
    for _ in range(3):
        env.step(torch.randn(4, 12, generator=generator))
    saved = manager.state_dict()
    later = [torch.randn(4, 12, generator=generator) for _ in range(3)]
    ctrls = []
    for action in later:
        manager.process_action(action)
        manager.apply_action()
        ctrls.append(env.sim.ctrl.clone())
    manager.load_state_dict(saved)
    for action, ctrl in zip(later, ctrls, strict=True):
        manager.process_action(action)
        manager.apply_action()
        assert torch.equal(env.sim.ctrl, ctrl)
    manager.reset(ids(1))
    manager.process_action(torch.ones(4, 12))
    manager.apply_action()
    home = torch.as_tensor(env.sim.model.key_qpos[env.sim.model.key("home").id, 7:])
    assert torch.equal(env.sim.ctrl[1], home)  # two steps ago env 1 had not started its episode
    assert not torch.equal(env.sim.ctrl[0], home)


# ------------------------------------------------------------------------------------- logging


def test_reset_events_log_their_distributions_each_step_an_env_resets():
    events = {
        name: EventTermCfg(func=case.func, mode="reset", params=dict(case.params))
        for name, case in CASES.items()
    }
    env = ManagerBasedRLEnv(dog_cfg(num_envs=4, events=events, episode_length_s=0.05))  # 3 steps of 20 ms
    _, extras = env.reset()
    keys = [
        f"Randomization/{key}/{stat}"
        for case in CASES.values()
        for key in case.ranges
        for stat in ("mean", "min", "max", "std")
    ]
    assert all(key in extras["log"] for key in keys)
    for case in CASES.values():
        for key, (low, high) in case.ranges.items():
            mean = float(extras["log"][f"Randomization/{key}/mean"])
            assert low <= mean <= high
            assert extras["log"][f"Randomization/{key}/mean"].dtype == torch.float32
    _, _, _, _, extras = env.step(torch.zeros(4, 12))
    assert not any(key.startswith("Randomization/") for key in extras["log"])  # no env reset
    run(env, 1)
    _, _, _, truncated, extras = env.step(torch.zeros(4, 12))  # third step: every env times out
    assert bool(truncated.all())
    assert all(key in extras["log"] for key in keys)


def test_startup_events_fill_the_randomization_state_at_construction():
    events = {
        "mass": EventTermCfg(
            func=mdp.randomize_added_mass,
            mode="startup",
            params={"bodies": bodies("trunk"), "mass_range": (1.0, 2.0)},
        )
    }
    env = ManagerBasedRLEnv(dog_cfg(num_envs=4, events=events))
    added = env.randomization_state["added_mass"]
    assert added.shape == (4, 1) and bool((added >= 1.0).all()) and bool((added <= 2.0).all())
    assert "Randomization/added_mass/mean" in env.extras["log"]


# ---------------------------------------------------------------------------------- warp backend


@pytest.fixture(scope="module")
def warp_and_cpu_envs():
    pytest.importorskip("warp")
    pytest.importorskip("mujoco_warp")
    return make_env(backend="warp"), make_env(backend="cpu")


@pytest.mark.parametrize("case_name", list(CASES))
def test_every_term_on_the_warp_backend_matches_the_cpu_backend(warp_and_cpu_envs, case_name: str):
    warp_env, cpu_env = warp_and_cpu_envs
    case = CASES[case_name]
    for name in case.fields:
        warp_env.sim.expand(name)
    before = snapshot(warp_env)
    for env in (warp_env, cpu_env):
        env.generator.manual_seed(11)
        case.func(env, ids(0, 2, 3), **resolve(env, case.params))
    assert_rows_untouched(warp_env, before, [1])
    for key, (low, high) in case.ranges.items():
        values = warp_env.randomization_state[key][[0, 2, 3]]
        assert bool((values >= low).all()) and bool((values <= high).all()), key
        expected = cpu_env.randomization_state[key][[0, 2, 3]].double()
        torch.testing.assert_close(values.double(), expected, rtol=1e-6, atol=1e-6)
    for name in case.fields:
        torch.testing.assert_close(
            warp_env.sim.expand(name).double(), cpu_env.sim.expand(name), rtol=1e-6, atol=1e-7
        )
    torch.testing.assert_close(warp_env.action_manager.delay, cpu_env.action_manager.delay)
    run(warp_env, 1)
    assert not bool(warp_env.sim.nonfinite.any())


def _mass_events() -> dict[str, EventTermCfg]:
    """Reset-mode terms that each call set_const: masses, inertias, centre of mass, and gears (the
    ant's plain motors: randomize_motor_strength scales their gear)."""
    return {
        "mass": EventTermCfg(func=mdp.randomize_added_mass, mode="reset",
                             params={"bodies": bodies("torso", ".*_shin"), "mass_range": (-0.1, 0.5)}),
        "inertia": EventTermCfg(func=mdp.randomize_inertia_scale, mode="reset",
                                params={"bodies": bodies("torso"), "scale_range": (0.7, 1.4)}),
        "com": EventTermCfg(func=mdp.randomize_com_offset, mode="reset",
                            params={"bodies": bodies("torso"), "offset_range": (-0.03, 0.03)}),
        "gear": EventTermCfg(func=mdp.randomize_motor_strength, mode="reset",
                             params={"actuators": actuators(), "scale_range": (0.6, 1.2)}),
    }


def test_reset_events_make_one_set_const_that_matches_one_per_term(monkeypatch: pytest.MonkeyPatch):
    """The event manager runs a mode's terms in sim.one_set_const(): one mj_setConst per reset for
    the four terms above, and every derived constant and state bit for bit as with four calls."""
    from contextlib import nullcontext

    from canter.sim.cpu import CpuSimulator

    def build() -> ManagerBasedRLEnv:
        cfg = ant_env_cfg()
        cfg.num_envs, cfg.seed, cfg.sim.num_threads, cfg.episode_length_s = 6, 3, 1, 0.4  # short episodes
        cfg.events = {**cfg.events, **_mass_events()}
        env = ManagerBasedRLEnv(cfg)
        env.reset()
        return env

    calls: list[list[int] | None] = []
    inner = CpuSimulator._set_const

    def counted(self: CpuSimulator, env_ids: torch.Tensor | None) -> None:
        calls.append(None if env_ids is None else env_ids.tolist())
        inner(self, env_ids)

    monkeypatch.setattr(CpuSimulator, "_set_const", counted)
    action = torch.linspace(-1.0, 1.0, 8).expand(6, 8)
    one = build()
    assert calls == [list(range(6))]  # the reset of every env: one call for all of them
    calls.clear()
    run(one, 45, action)
    ends = 45 // one.max_episode_length
    assert ends >= 2 and calls == [list(range(6))] * ends  # one call per episode end (four terms)
    monkeypatch.setattr(CpuSimulator, "one_set_const", lambda self: nullcontext())
    calls.clear()
    per_term = build()
    assert len(calls) == 4
    run(per_term, 45, action)
    assert len(calls) == 4 * (1 + ends)
    a, b = one.sim.get_state(), per_term.sim.get_state()
    assert a.keys() == b.keys() and "model/body_subtreemass" in a
    for key in a:
        assert torch.equal(a[key], b[key]), key


def test_a_failed_actuator_check_fails_again_at_every_call():
    """Model facts a term works out once (the servo check of randomize_pd_gains) are kept only when
    they hold: a wrong selection raises at every call, not only at the first."""
    env = ManagerBasedRLEnv(ant_env_cfg())  # the ant's actuators are plain motors
    env.reset()
    motors = resolve(env, {"a": actuators()})["a"]
    for _ in range(2):
        with pytest.raises(ConfigError, match="is not a position actuator"):
            mdp.randomize_pd_gains(env, ids(0), motors, (0.9, 1.1))
