"""The warp simulator's conditional bodies (the NaN guard's reset + forward, forward(mask),
set_const(mask)) run on CUDA as the body of a conditional graph node, which may not allocate memory;
MuJoCo Warp's forward allocates scratch arrays on every call. _ReplayAllocator records those
allocations once and serves them again while the body is captured.

CUDA is not needed to check what that relies on: MuJoCo Warp's host code asks for the same blocks in
the same order on every call, whatever the state, and computing into recycled blocks gives the same
numbers. Here the allocator is put under Warp's CPU device (CUDA-only wp.set_device_allocator is what
the simulator uses on a GPU; tests/gpu runs it there)."""

from __future__ import annotations

import pytest

pytest.importorskip("warp")
pytest.importorskip("mujoco_warp")

import mujoco_warp as mjw
import torch

from canter.sim.config import SimCfg
from canter.sim.model import asset_path, load_model
from canter.sim.warp import WarpSimulator, _ReplayAllocator

CPU = torch.device("cpu")


class _CountingAllocator:
    """The device's own allocator, counting what it is asked for."""

    def __init__(self, base):
        self.base, self.allocated, self.freed = base, 0, 0

    def allocate(self, size):
        self.allocated += 1
        return self.base.allocate(size)

    def deallocate(self, ptr, size):
        self.freed += 1
        self.base.deallocate(ptr, size)


def test_replay_allocator_serves_recorded_blocks_in_order_and_refuses_unseen_ones():
    class Fake:
        def __init__(self):
            self.next, self.freed = 1000, []

        def allocate(self, size):
            self.next += size
            return self.next - size

        def deallocate(self, ptr, size):
            self.freed.append((ptr, size))

    base = Fake()
    arena = _ReplayAllocator(base)
    recorded = [arena.allocate(n) for n in (64, 8, 256)]
    assert recorded == [1000, 1064, 1072]
    arena.deallocate(recorded[0], 64)  # a scratch array freed by the body: kept for the replay
    assert base.freed == []
    for _ in range(2):  # every capture starts from the first block
        arena.replay()
        assert [arena.allocate(64), arena.allocate(8), arena.allocate(200)] == recorded  # smaller fits
    arena.replay()
    arena.allocate(64)
    with pytest.raises(RuntimeError, match="allocation 2 of 16 bytes was not seen"):
        arena.allocate(16)  # larger than the recorded block
    arena.replay()
    for n in (64, 8, 256):
        arena.allocate(n)
    with pytest.raises(RuntimeError, match="allocation 4 of 8 bytes"):
        arena.allocate(8)  # more allocations than recorded
    arena.release()
    assert base.freed == [(1000, 64), (1064, 8), (1072, 256)]


def _bodies(sim: WarpSimulator):
    m, d = sim.mjw_model, sim.mjw_data
    return {
        "forward": lambda: mjw.forward(m, d),
        "recover": sim._recover_body,  # reset of the masked worlds, then forward
        "set_const": lambda: mjw.set_const(m, d),
    }


def _randomize(sim: WarpSimulator, qpos0: torch.Tensor, seed: int) -> None:
    generator = torch.Generator().manual_seed(seed)
    sim.qpos.copy_(qpos0 + 0.05 * torch.randn(sim.qpos.shape, generator=generator))
    sim.qvel.copy_(torch.randn(sim.qvel.shape, generator=generator))


@pytest.mark.parametrize("asset", ["ant.xml", "dog.xml", "hand_cube.xml"])
def test_conditional_bodies_allocate_the_same_blocks_every_call_and_compute_the_same(asset, monkeypatch):
    model = load_model(asset_path(asset))
    runs = {}
    for mode in ("plain", "replayed"):
        generator = torch.Generator().manual_seed(0)
        sim = WarpSimulator(model, 8, SimCfg(backend="warp"), CPU)
        sim.expand("body_mass").mul_(1.0 + 0.1 * torch.rand(sim.num_envs, model.nbody, generator=generator))
        qpos0 = sim.qpos.clone()
        device = sim._wp_device
        counting = _CountingAllocator(device.get_allocator())
        outputs = {}
        for name, body in _bodies(sim).items():
            arena = _ReplayAllocator(counting)
            _randomize(sim, qpos0, seed=2 if mode == "replayed" else 1)
            sim._reset_mask.copy_(torch.arange(sim.num_envs) % 3 == 0)
            if mode == "replayed":  # record on one state, then serve a different state from the blocks
                monkeypatch.setattr(device, "get_allocator", lambda pinned=False, a=arena: a)
                body()
                assert arena.blocks, f"{name}: MuJoCo Warp allocated nothing (the test would prove nothing)"
                _randomize(sim, qpos0, seed=1)
                arena.replay()
                before = counting.allocated
                body()
                assert counting.allocated == before, f"{name}: allocated outside the recorded blocks"
                assert arena.served == len(arena.blocks), f"{name}: fewer allocations than recorded"
                monkeypatch.undo()
            else:
                body()
            outputs[name] = {k: sim.field(k).clone() for k in ("qpos", "qvel", "xpos", "qfrc_constraint", "sensordata",
                                                               "qacc", "cinert")}
            outputs[name]["subtreemass"] = torch.as_tensor(sim.mjw_model.body_subtreemass.numpy()).clone()
        runs[mode] = outputs
    for name, fields in runs["plain"].items():
        for key, value in fields.items():
            assert torch.equal(value, runs["replayed"][name][key]), (name, key)
