"""The cpu backend: zero-copy views, subset resets, NaN guard, per-env fields, sensor stage, determinism."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest
import torch

from canter.core.errors import CanterError, ConfigError
from canter.sim.config import SimCfg
from canter.sim.cpu import CpuSimulator
from canter.sim.model import asset_path, load_model

ANT = asset_path("ant.xml")


def _sim(num_envs: int = 8, **cfg) -> CpuSimulator:
    return CpuSimulator(load_model(ANT), num_envs, SimCfg(num_threads=2, **cfg), torch.device("cpu"))


def _random_ctrl(sim: CpuSimulator, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.rand(sim.ctrl.shape, generator=g, dtype=torch.float64) * 2 - 1


def test_views_are_zero_copy_into_mujoco_state():
    sim = _sim()
    sim.qpos[3, 2] = 1.25
    assert sim.batch.bind("qpos")[3, 2] == 1.25
    sim.ctrl[:] = 0.5
    assert np.all(sim.batch.bind("ctrl") == 0.5)


def test_step_matches_a_loop_over_mjdata():
    sim = _sim(4)
    sim.reset()
    sim.ctrl.copy_(_random_ctrl(sim, 0))
    ctrl = sim.ctrl.numpy().copy()
    sim.step(5)
    model = load_model(ANT)
    for i in range(4):
        data = mujoco.MjData(model)
        data.ctrl[:] = ctrl[i]
        mujoco.mj_step(model, data, 5)
        np.testing.assert_array_equal(sim.qpos[i].numpy(), data.qpos)
        np.testing.assert_array_equal(sim.qvel[i].numpy(), data.qvel)


def test_reset_touches_only_given_rows():
    sim = _sim(6)
    sim.reset()
    sim.ctrl.copy_(_random_ctrl(sim, 1))
    sim.step(10)
    before = sim.qpos.clone()
    sim.reset(torch.tensor([1, 4]))
    model = load_model(ANT)
    for i in (1, 4):
        np.testing.assert_array_equal(sim.qpos[i].numpy(), model.qpos0)
        assert torch.all(sim.qvel[i] == 0) and torch.all(sim.ctrl[i] == 0)
    for i in (0, 2, 3, 5):
        assert torch.equal(sim.qpos[i], before[i])


def test_nan_guard_resets_only_broken_envs_and_counts_them():
    sim, reference = _sim(6), _sim(6)
    for s in (sim, reference):
        s.reset()
        s.ctrl.copy_(_random_ctrl(s, 2))
        s.step(3)
    sim.qvel[[1, 3]] = float("nan")
    sim.qpos[5, 0] = float("inf")
    sim.step(5)
    reference.step(5)
    assert sim.nonfinite.tolist() == [False, True, False, True, False, True]
    assert int(sim.nonfinite_total) == 3
    assert torch.isfinite(sim.qpos).all() and torch.isfinite(sim.qvel).all()
    for i in (0, 2, 4):
        assert torch.equal(sim.qpos[i], reference.qpos[i])
    sim.step(5)  # the guard clears once the envs are healthy
    assert not sim.nonfinite.any() and int(sim.nonfinite_total) == 3


def test_expand_gives_per_env_model_fields():
    sim = _sim(4)
    torso = sim.model.body("torso").id
    mass = sim.expand("body_mass")
    assert mass.shape == (4, sim.model.nbody)
    mass[2, torso] *= 3.0
    sim.set_const()
    sim.reset()
    sim.forward()
    sim.step(30)
    z = sim.qpos[:, 2]
    assert z[0] == z[1] == z[3]  # same parameters, same trajectory
    assert z[2] != z[0]  # a heavier torso sinks differently
    assert sim.get_state()["model/body_mass"].shape == (4, sim.model.nbody)  # saved with the state
    with pytest.raises(ConfigError, match="no per-env field"):
        sim.expand("not_a_field")


def test_expanded_views_are_kept_and_stay_live_as_other_fields_expand():
    sim = _sim(4)
    friction = sim.expand("geom_friction")
    assert sim.expand("geom_friction") is friction
    assert not sim.is_expanded("body_inertia")
    for name in ("body_mass", "body_inertia", "body_ipos", "actuator_gear", "dof_damping"):
        sim.expand(name)
    sim.set_const()
    assert sim.is_expanded("body_inertia") and sim.is_expanded("geom_friction")
    friction[2, 0, 0] = 0.125  # still MuJoCo's memory: the batch sees the write
    assert sim.batch.expanded("geom_friction")[2, 0, 0] == 0.125
    assert sim.expand("geom_friction")[2, 0, 0] == 0.125


def test_sensor_stage_current_matches_state_lagged_trails_it():
    pos_slice = slice(0, 3)  # framepos of the imu site at the torso origin: the first sensor
    for stage, expect_equal in (("current", True), ("lagged", False)):
        sim = _sim(2, sensor_stage=stage)
        sim.reset()
        sim.qvel[:, 2] = -1.0  # falling: the position changes every substep
        sim.step(5)
        same = torch.allclose(sim.sensordata[:, pos_slice], sim.qpos[:, 0:3], atol=1e-12)
        assert same == expect_equal, stage


def test_same_seed_same_states_bitwise():
    def run() -> torch.Tensor:
        sim = _sim(16)
        sim.reset()
        g = torch.Generator().manual_seed(7)
        for _ in range(20):
            sim.ctrl.copy_(torch.rand(sim.ctrl.shape, generator=g, dtype=torch.float64) * 2 - 1)
            sim.step(5)
        return sim.qpos.clone()

    assert torch.equal(run(), run())


def test_state_roundtrip_continues_bitwise():
    sim = _sim(4)
    sim.reset()
    sim.ctrl.copy_(_random_ctrl(sim, 3))
    sim.expand("geom_friction")[1, :, 0] = 0.3
    sim.step(7)
    saved = sim.get_state()
    sim.step(9)
    expected = sim.qpos.clone()
    other = _sim(4)
    other.set_state(saved)
    other.step(9)
    assert torch.equal(other.qpos, expected)


def test_broken_mjcf_gives_one_line_error(tmp_path):
    bad = tmp_path / "bad.xml"
    bad.write_text("<mujoco><worldbody><body><geom type='sphere'/></body></worldbody>")
    with pytest.raises(CanterError, match="broken MJCF") as info:
        load_model(bad)
    assert "\n" not in str(info.value)
    with pytest.raises(CanterError, match="not found"):
        load_model(tmp_path / "missing.xml")


def test_cpu_backend_rejects_cuda_device():
    with pytest.raises(ConfigError, match="backend"):
        CpuSimulator(load_model(ANT), 2, SimCfg(), torch.device("cuda"))


def test_derived_field_asked_for_after_stepping_is_filled_from_the_next_step():
    """Batch copies a derived field out only once it is registered and keeps no MjData between
    calls, so a field first asked for after the simulation ran holds no values of the calls
    before; from the next step on it equals a field bound up front (the contract `field` states)."""
    early, late = _sim(4), _sim(4)
    bound_early = early.field("xpos")
    for sim in (early, late):
        sim.ctrl.copy_(_random_ctrl(sim, 3))
        sim.step(3)
    bound_late = late.field("xpos")
    assert late.field("xpos") is bound_late  # one live view per field
    assert not torch.equal(bound_early, bound_late)  # not filled yet
    for sim in (early, late):
        sim.step()
    assert torch.equal(bound_early, bound_late)


def test_every_blow_up_of_an_env_is_caught_and_mujocos_warnings_are_counted_not_printed(capfd, tmp_path, monkeypatch):
    """At a 0.5 s timestep the ant blows up again and again. MuJoCo resets such an env itself and
    counts a warning, but it counts and warns only while the count is 0: each catch after an env's
    first went unseen while the counters stayed at 1. Every blow-up must be caught (its clock jumps
    back to one step), and MuJoCo's warnings counted instead of flooding stderr and MUJOCO_LOG.TXT."""
    from canter.sim import mjwarnings
    from canter.sim.backend import make_simulator

    monkeypatch.chdir(tmp_path)
    sim = make_simulator(load_model(ANT, timestep=0.5), 4, SimCfg(num_threads=1), torch.device("cpu"))
    mjwarnings.take()
    g = torch.Generator().manual_seed(0)
    jumped_back = caught = 0
    for _ in range(60):
        sim.ctrl.copy_(torch.randn(sim.ctrl.shape, generator=g, dtype=torch.float64))
        time_before = sim.batch.state[:, 0].copy()
        sim.step()
        jumped_back += int((sim.batch.state[:, 0] < time_before).sum())  # MuJoCo reset it (or we did)
        caught += int(sim.nonfinite.sum())
    assert caught >= jumped_back > 10  # measured: 38 blow-ups in 60 steps of 4 envs
    assert int(sim.nonfinite_total) == caught
    warned = mjwarnings.take()
    assert sum(warned.values()) > 10 and all("unstable" in message for message in warned)
    assert "WARNING" not in capfd.readouterr().err
    assert not (tmp_path / "MUJOCO_LOG.TXT").exists()


def test_a_batch_too_large_for_memory_is_refused_with_an_estimate():
    with pytest.raises(ConfigError, match=r"num_envs: needs about [\d.]+ [TG]B of memory \(1,000,000,000 envs x ~[\d,]+ bytes\), "
                                          r"only [\d.]+ [kMGT]?B is available on cpu"):
        _sim(10**9)


def test_one_set_const_makes_one_call_for_the_union_of_the_envs():
    sim = _sim(6)
    calls: list[list[int] | None] = []
    inner = sim._set_const
    sim._set_const = lambda env_ids: (calls.append(None if env_ids is None else env_ids.tolist()), inner(env_ids))[1]
    with sim.one_set_const():
        sim.set_const(torch.tensor([4, 0]))
        with sim.one_set_const():  # joins the outer block
            sim.set_const(torch.tensor([2, 4]))
        assert calls == []
    assert calls == [[0, 2, 4]]
    same = torch.tensor([1, 3])
    with sim.one_set_const():
        sim.set_const(same)
        sim.set_const(same)
    assert calls[-1] == [1, 3]
    with sim.one_set_const():
        sim.set_const(torch.tensor([5]))
        sim.set_const()  # every env
    assert calls[-1] is None
    with sim.one_set_const():
        pass  # nothing asked: no call
    with pytest.raises(RuntimeError), sim.one_set_const():
        sim.set_const(torch.tensor([1]))
        raise RuntimeError("a term failed")
    assert len(calls) == 3
    sim.set_const(torch.tensor([3]))  # outside a block: at once
    assert calls[-1] == [3]


def test_set_const_union_of_masks_and_indices():
    from canter.sim.backend import _union

    mask = torch.tensor([True, False, False, False])
    assert _union([mask, torch.tensor([2])], 4).tolist() == [True, False, True, False]
    assert _union([torch.tensor([3, 1]), torch.tensor([1])], 4).tolist() == [1, 3]
    assert _union([mask, None], 4) is None
