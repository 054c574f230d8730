"""The warp backend (MuJoCo Warp on Warp's CPU device): parity with the cpu backend, subset resets,
NaN guard, per-env model fields, live views.

The first run compiles MuJoCo Warp's kernels for Warp's CPU device (a few minutes on 2 cores); Warp
caches them (~/.cache/warp), after which the whole file takes seconds.

Parity tolerances. Both backends start from identical states (float32 values, the float64 cpu
backend holding the same numbers), so differences come only from float32 vs float64 arithmetic and
from the constraint solver stopping at tolerance 1e-6 (MuJoCo Warp raises the MJCF's tolerance to at
least 1e-6) instead of the MJCF's 1e-8. Measured worst cases over the 16 test states: cartpole
5e-7 (qpos) and 6e-6 (qvel, up to ~50) after one step, 1.4e-5 / 9e-5 after 10 control steps; ant
with an elliptic cone (7 envs in ground contact, joint limits active) 1.2e-7 (qpos), 2e-5 (qvel),
2.5e-3 on touch sensors of ~100 N after one step, 3e-6 / 2e-4 after 3 control steps. Each tolerance
(atol + rtol |expected|) sits at least 9x above its measured error (_ratio 0.01-0.11), and each test also asserts that a real bug exceeds it by a factor > 20: a control off by
10% of its range (as a wrong ctrl mapping or gear would give; measured 85x-9000x), the other
sensor stage (1600x-1.5e6x), a timestep 10% off (horizon). Removing sensor_vel from the "current"
recompute, delaying contacts by 5 mm or swapping force and torque in xfrc_applied each made
these tests fail.

The ant asset uses a pyramidal friction cone. MuJoCo C and MuJoCo Warp lay the pyramid's edges
along different tangent directions of the contact frame (e.g. capsule-plane contacts), and a
pyramid is not rotation invariant, so the contact forces of the same state legitimately differ
(0.07-0.13 in qvel after one 10 ms step, measured). The tight contact parity therefore runs on the ant with
an elliptic cone (rotation invariant); on the asset itself the test checks the contact and
constraint sets per env and tight agreement for envs without contacts.
"""

from __future__ import annotations

import pytest

pytest.importorskip("warp")
pytest.importorskip("mujoco_warp")

import mujoco
import torch

from canter.core.errors import ConfigError
from canter.sim.config import SimCfg
from canter.sim.cpu import CpuSimulator
from canter.sim.model import asset_path, load_model
from canter.sim.warp import WarpSimulator

CPU = torch.device("cpu")
N = 16

# (atol, rtol) per compared quantity; see the module docstring for the measured errors
TOL = {
    "cartpole": {"qpos": (1e-6, 1e-6), "qvel": (1e-5, 1e-5), "sensordata": (1e-5, 1e-5)},
    "ant_elliptic": {"qpos": (1e-5, 1e-5), "qvel": (1e-3, 1e-3), "sensordata": (1e-3, 1e-3)},
}
# horizon runs: errors grow along the trajectory (ant: contacts make it grow faster)
HORIZON_TOL = {
    "cartpole": {"qpos": (1e-4, 1e-4), "qvel": (1e-3, 1e-4), "sensordata": (1e-3, 1e-4)},
    "ant_elliptic": {"qpos": (1e-4, 1e-4), "qvel": (3e-3, 3e-3), "sensordata": (3e-3, 3e-3)},
}
HORIZON = {"cartpole": 10, "ant_elliptic": 3}  # control steps of 5 substeps


@pytest.fixture(scope="module")
def models() -> dict[str, mujoco.MjModel]:
    ant_elliptic = load_model(asset_path("ant.xml"))
    ant_elliptic.opt.cone = mujoco.mjtCone.mjCONE_ELLIPTIC
    return {
        "cartpole": load_model(asset_path("cartpole.xml")),
        "ant": load_model(asset_path("ant.xml")),
        "ant_elliptic": ant_elliptic,
    }


def _warp(model: mujoco.MjModel, num_envs: int = N, **cfg) -> WarpSimulator:
    return WarpSimulator(model, num_envs, SimCfg(backend="warp", **cfg), CPU)


def _cpu(model: mujoco.MjModel, num_envs: int = N, **cfg) -> CpuSimulator:
    return CpuSimulator(model, num_envs, SimCfg(num_threads=1, **cfg), CPU)


def _random_ctrl(model: mujoco.MjModel, num_envs: int, g: torch.Generator) -> torch.Tensor:
    lo, hi = torch.from_numpy(model.actuator_ctrlrange).float().T
    return lo + (hi - lo) * torch.rand(num_envs, model.nu, generator=g)


@pytest.fixture(scope="module")
def states(models) -> dict[str, dict[str, torch.Tensor]]:
    """Per model, N diverse float32 states: perturbed around qpos0, then 60 steps of a random
    control on the cpu backend (the ant lands: feet, shins or torso touch the ground), then half of
    the free-floating envs lifted into the air; random qvel kick, random ctrl in range, random forces
    on the first body."""
    out = {}
    for name, model in models.items():
        g = torch.Generator().manual_seed(7)
        sim = _cpu(model)
        sim.qpos.copy_(
            torch.from_numpy(model.qpos0)
            + 0.1 * torch.randn(sim.qpos.shape, generator=g, dtype=torch.float64)
        )
        _normalize_quats(model, sim.qpos)
        sim.qvel.copy_(0.5 * torch.randn(sim.qvel.shape, generator=g, dtype=torch.float64))
        sim.ctrl.copy_(_random_ctrl(model, N, g))  # held: the ant settles into varied poses
        sim.step(60)
        free = model.jnt_type == mujoco.mjtJoint.mjJNT_FREE
        if free.any():
            z = int(model.jnt_qposadr[free.argmax()]) + 2
            sim.qpos[::2, z] += 0.05 + 0.25 * torch.rand(N // 2, generator=g, dtype=torch.float64)
        xfrc = torch.zeros(sim.xfrc_applied.shape)
        xfrc[1::3, 1] = 20 * torch.randn(len(range(1, N, 3)), 6, generator=g)
        out[name] = {
            "qpos": sim.qpos.float(),
            "qvel": (sim.qvel + torch.randn(sim.qvel.shape, generator=g, dtype=torch.float64)).float(),
            "qacc_warmstart": sim.field("qacc_warmstart").float(),
            "ctrl": _random_ctrl(model, N, g),
            "xfrc_applied": xfrc,
        }
    return out


def _normalize_quats(model: mujoco.MjModel, qpos: torch.Tensor) -> None:
    for j in range(model.njnt):
        adr = int(model.jnt_qposadr[j])
        if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
            adr += 3
        elif model.jnt_type[j] != mujoco.mjtJoint.mjJNT_BALL:
            continue
        qpos[:, adr : adr + 4] /= qpos[:, adr : adr + 4].norm(dim=1, keepdim=True)


def _load(sim, state: dict[str, torch.Tensor]) -> None:
    """Write a state into a simulator (either backend) and forward it."""
    sim.reset()
    for name, value in state.items():
        view = getattr(sim, name) if name != "qacc_warmstart" else sim.field(name)
        view.copy_(value.to(view.dtype))
    sim.forward()


def _ratio(actual: torch.Tensor, expected: torch.Tensor, tol: tuple[float, float]) -> float:
    """max |actual - expected| / (atol + rtol |expected|): <= 1 means within tolerance."""
    atol, rtol = tol
    expected = expected.double()
    return float(((actual.double() - expected).abs() / (atol + rtol * expected.abs())).max())


def _pos_vel_sensor_columns(model: mujoco.MjModel) -> torch.Tensor:
    cols = [
        torch.arange(int(model.sensor_adr[i]), int(model.sensor_adr[i] + model.sensor_dim[i]))
        for i in range(model.nsensor)
        if int(model.sensor_needstage[i])
        in (int(mujoco.mjtStage.mjSTAGE_POS), int(mujoco.mjtStage.mjSTAGE_VEL))
    ]
    return torch.cat(cols)


# ------------------------------------------------------------------------------------------ parity


@pytest.mark.parametrize("stage", ["lagged", "current"])
@pytest.mark.parametrize("name", ["cartpole", "ant_elliptic"])
def test_single_step_matches_cpu_backend(models, states, name, stage):
    model, state, tol = models[name], states[name], TOL[name]
    other_stage = "current" if stage == "lagged" else "lagged"
    warp, cpu, cpu_other = (
        _warp(model, sensor_stage=stage),
        _cpu(model, sensor_stage=stage),
        _cpu(model, sensor_stage=other_stage),
    )
    # bound before the calls: cpu backend outputs fill on the next call
    cpu_nefc, cpu_ncon = cpu.field("nefc"), cpu.field("ncon")
    for sim in (warp, cpu, cpu_other):
        _load(sim, state)
    torch.testing.assert_close(
        warp.sensordata.double(), cpu.sensordata, atol=tol["sensordata"][0], rtol=tol["sensordata"][1]
    )
    assert torch.equal(warp.field("nefc"), cpu_nefc), "different contact/constraint sets"
    if name.startswith("ant"):  # the states cover envs in ground contact and in the air
        assert 0.25 * N <= int((cpu_ncon > 0).sum()) <= 0.75 * N
    start = warp.get_state()

    for sim in (warp, cpu, cpu_other):
        sim.step()
    assert not warp.nonfinite.any()
    for field in ("qpos", "qvel", "sensordata"):
        assert _ratio(getattr(warp, field), getattr(cpu, field), tol[field]) <= 1, field
    assert torch.equal(warp.field("nefc"), cpu_nefc), "different contact/constraint sets"

    # the tolerance catches real bugs: the wrong sensor stage ...
    cols = _pos_vel_sensor_columns(model)
    assert _ratio(warp.sensordata[:, cols], cpu_other.sensordata[:, cols], tol["sensordata"]) > 20
    # ... and a different control (what a wrong ctrl mapping or gear would give)
    warp.set_state(start)
    warp.ctrl.add_(0.1 * torch.from_numpy(model.actuator_ctrlrange[:, 1]).float())
    warp.step()
    assert _ratio(warp.qvel, cpu.qvel, tol["qvel"]) > 20


@pytest.mark.parametrize("name", ["cartpole", "ant_elliptic"])
def test_short_horizon_matches_cpu_backend(models, states, name):
    model, tol = models[name], HORIZON_TOL[name]
    warp, cpu = _warp(model, sensor_stage="current"), _cpu(model, sensor_stage="current")
    for sim in (warp, cpu):
        _load(sim, states[name])
    g = torch.Generator().manual_seed(3)
    ctrls = [_random_ctrl(model, N, g) for _ in range(HORIZON[name])]
    for ctrl in ctrls:
        warp.ctrl.copy_(ctrl)
        cpu.ctrl.copy_(ctrl.double())
        warp.step(5)
        cpu.step(5)
    for field in ("qpos", "qvel", "sensordata"):
        assert _ratio(getattr(warp, field), getattr(cpu, field), tol[field]) <= 1, field
    # a timestep 10% off (or any comparable slip) breaks the agreement many times over
    slow = _warp(model, sensor_stage="current")
    slow.expand("opt.timestep").mul_(0.9)
    _load(slow, states[name])
    for ctrl in ctrls:
        slow.ctrl.copy_(ctrl)
        slow.step(5)
    assert _ratio(slow.qpos, cpu.qpos, tol["qpos"]) > 20


def test_pyramidal_ant_matches_cpu_backend_without_contacts(models, states):
    """The ant asset (pyramidal cone): same contacts and constraints per env, tight agreement where
    no contact acts; contact envs only loosely (pyramid edges lie along different tangents)."""
    model = models["ant"]
    warp, cpu = _warp(model), _cpu(model)
    ncon, nefc = cpu.field("ncon"), cpu.field("nefc")  # bound before the calls that fill them
    for sim in (warp, cpu):
        _load(sim, states["ant"])
    airborne = ncon == 0
    assert 0 < int(airborne.sum()) < N
    warp.step()
    cpu.step()
    assert torch.equal(warp.field("nefc"), nefc)
    tol = TOL["ant_elliptic"]
    for field in ("qpos", "qvel"):
        assert _ratio(getattr(warp, field)[airborne], getattr(cpu, field)[airborne], tol[field]) <= 1
    # contact envs: only a loose bound (measured 0.07): one 10 ms step of ~1 m/s motions
    assert (warp.qvel.double() - cpu.qvel).abs().max() < 0.5


# ------------------------------------------------------------------------------- resets, NaN guard


def test_reset_touches_only_given_rows(models, states):
    model = models["ant"]
    sim = _warp(model)
    _load(sim, states["ant"])
    sim.step(3)
    views = {
        name: sim.field(name)
        for name in ("qpos", "qvel", "ctrl", "xfrc_applied", "qacc_warmstart", "time", "sensordata", "xpos")
    }
    before = {name: view.clone() for name, view in views.items()}
    ids = torch.tensor([1, 4, 9])
    sim.reset(ids)
    others = torch.ones(N, dtype=torch.bool)
    others[ids] = False
    for name, view in views.items():
        assert torch.equal(view[others], before[name][others]), name
    qpos0 = torch.from_numpy(model.qpos0).float()
    assert torch.equal(sim.qpos[ids], qpos0.expand(len(ids), -1))
    for name in ("qvel", "ctrl", "xfrc_applied", "qacc_warmstart", "time"):
        assert torch.all(views[name][ids] == 0), name

    # forward(ids) recomputes those envs' derived values and leaves the others' as they were
    sim.forward(ids)
    for name in ("sensordata", "xpos"):
        assert torch.equal(views[name][others], before[name][others]), name
    reference = _warp(model, 1)
    assert torch.allclose(sim.field("xpos")[ids], reference.field("xpos").expand(len(ids), -1, -1))


def test_nan_guard_resets_only_broken_envs_and_counts_them(models, states):
    model = models["ant"]
    sim, reference = _warp(model), _warp(model)
    for s in (sim, reference):
        _load(s, states["ant"])
    sim.qvel[[2, 5]] = float("nan")
    sim.qpos[11, 0] = float("inf")
    sim.ctrl[7] = 1e12  # mju_isBad control: that env steps with zero controls and stays healthy
    reference.ctrl[7] = 0.0
    sim.step(5)
    reference.step(5)
    broken = torch.zeros(N, dtype=torch.bool)
    broken[[2, 5, 11]] = True
    assert torch.equal(sim.nonfinite, broken)
    assert int(sim.nonfinite_total) == 3
    for view in (sim.qpos, sim.qvel, sim.sensordata, sim.field("xpos")):
        assert torch.isfinite(view).all()
    qpos0 = torch.from_numpy(model.qpos0).float()
    assert torch.equal(sim.qpos[broken], qpos0.expand(3, -1))
    assert torch.all(sim.qvel[broken] == 0) and torch.all(sim.ctrl[broken] == 0)
    assert torch.all(sim.ctrl[7] == 1e12)  # the written controls are kept, as MuJoCo C does
    for field in ("qpos", "qvel", "sensordata"):
        torch.testing.assert_close(
            getattr(sim, field)[~broken], getattr(reference, field)[~broken], atol=1e-6, rtol=1e-6
        )
    sim.step(5)  # the guard clears once the envs are healthy
    assert not sim.nonfinite.any() and int(sim.nonfinite_total) == 3


# -------------------------------------------------------------------------------- per-env model


def test_expanded_fields_differ_per_env_and_stay_live(models, states):
    model = models["ant"]
    sim = _warp(model, 8)
    sim.step(30)  # every env lands on its feet
    standing = sim.get_state()
    assert (sim.field("nefc") > 0).all()

    mass = sim.expand("body_mass")
    assert mass.shape == (8, model.nbody)
    mass[4:, 1] *= 3.0  # heavier torso in envs 4-7
    sim.set_const()
    subtree = sim.expand("body_subtreemass")
    torch.testing.assert_close(subtree[4:, 0], subtree[:4, 0] + 2 * float(model.body_mass[1]))
    friction = sim.expand("geom_friction")
    assert friction.shape == (8, model.ngeom, 3)
    friction[[2, 3, 6, 7]] *= 0.2  # slippery envs 2, 3, 6, 7
    assert {"model/body_mass", "model/geom_friction"} <= set(sim.get_state())  # saved with the state

    sim.set_state(standing)
    sim.qvel[:, 0] = 1.0  # sliding forward
    sim.ctrl.copy_(states["ant"]["ctrl"][:1].expand(8, -1))
    for _ in range(5):
        sim.step(5)
    groups = [[0, 1], [2, 3], [4, 5], [6, 7]]
    for a, b in groups:
        assert torch.equal(sim.qpos[a], sim.qpos[b])
    finals = [sim.qpos[a] for a, _ in groups]
    for i in range(len(finals)):
        for j in range(i + 1, len(finals)):
            assert (finals[i] - finals[j]).abs().max() > 1e-3, (i, j)

    # a view expanded later is live too: no gravity in env 0, in the air
    gravity = sim.expand("opt.gravity")
    assert gravity.shape == (8, 3)
    gravity[0] = 0.0
    sim.set_state(standing)
    sim.qpos[:, 2] += 1.0  # in the air
    sim.step(5)
    fall = float(sim.qvel[0, 2] - sim.qvel[1, 2])  # ~ g * 5 substeps of 10 ms
    assert 0.3 < fall < 0.6


def test_set_const_keeps_other_envs_and_state(models):
    model = models["ant"]
    sim = _warp(model, 4)
    sim.step(2)
    xpos, sensordata, qpos = sim.field("xpos").clone(), sim.sensordata.clone(), sim.qpos.clone()
    mass = sim.expand("body_mass")
    mass[:, 1] *= 2.0
    sim.set_const(torch.tensor([0, 2]))
    subtree = sim.expand("body_subtreemass")[:, 0]
    assert subtree[0] == subtree[2] and subtree[1] == subtree[3] and subtree[0] > subtree[1]
    assert torch.equal(sim.field("xpos"), xpos) and torch.equal(sim.sensordata, sensordata)
    assert torch.equal(sim.qpos, qpos)


# ----------------------------------------------------------------------------- views and errors


def test_views_stay_on_mujoco_warp_memory(models):
    model = models["ant"]
    sim = _warp(model, 4)
    names = (
        "qpos",
        "qvel",
        "act",
        "ctrl",
        "xfrc_applied",
        "sensordata",
        "xpos",
        "xquat",
        "site_xpos",
        "cfrc_ext",
        "subtree_com",
    )
    views = {name: sim.field(name) for name in names}
    assert views["qpos"] is sim.qpos and views["ctrl"] is sim.ctrl
    for view in views.values():
        assert view.dtype == torch.float32 and view.shape[0] == 4
    assert views["xfrc_applied"].shape == (4, model.nbody, 6)
    sim.expand("body_mass")
    sim.set_const()
    sim.step(2)
    sim.reset(torch.tensor([1]))
    sim.forward()
    sim.set_state(sim.get_state())
    for name, view in views.items():
        array = getattr(sim.mjw_data, name)
        assert array.size == 0 or view.data_ptr() == array.ptr, name
    sim.qpos[2, 2] = 2.5
    assert sim.mjw_data.qpos.numpy()[2, 2] == 2.5


def test_get_state_set_state_repeats_bitwise(models, states):
    model = models["ant"]
    sim = _warp(model)
    _load(sim, states["ant"])
    sim.expand("geom_friction")[::2] *= 0.5
    state = sim.get_state()
    sim.step(5)
    first = sim.qpos.clone(), sim.sensordata.clone()
    sim.expand("geom_friction").fill_(1.0)
    sim.step(5)
    sim.set_state(state)
    sim.step(5)
    assert torch.equal(sim.qpos, first[0]) and torch.equal(sim.sensordata, first[1])


def test_unknown_names_raise_config_errors(models):
    sim = _warp(models["cartpole"], 2)
    with pytest.raises(ConfigError, match="no_such_field"):
        sim.field("no_such_field")
    with pytest.raises(ConfigError, match="contact"):
        sim.field("contact")
    with pytest.raises(ConfigError, match="geom_condim"):
        sim.expand("geom_condim")  # an MjModel field MuJoCo Warp shares between worlds
    with pytest.raises(ConfigError, match=r"opt\.nope"):
        sim.expand("opt.nope")
    with pytest.raises(ConfigError, match="num_envs"):
        _warp(models["cartpole"], 0)
