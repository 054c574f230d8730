"""`canter bench env`'s third side, raw Batch.step on the env's own states: what it replays is the
physics the env ran (bitwise), and the env it borrowed the batch from goes on exactly as a twin
that was never interrupted."""

from __future__ import annotations

import torch

from canter.bench.env import RawOnEnvStates
from canter.envs.manager_env import ManagerBasedRLEnv
from canter.sim.cpu import CpuSimulator
from canter.tasks import REGISTRY


def _env() -> ManagerBasedRLEnv:
    cfg = REGISTRY.get("dog-flat").env_cfg()
    cfg.num_envs, cfg.seed = 6, 3
    env = ManagerBasedRLEnv(cfg)
    env.reset()
    return env


def test_raw_on_env_states_replays_the_env_physics_and_hands_the_env_back():
    env, twin = _env(), _env()
    gen, twin_gen = torch.Generator().manual_seed(7), torch.Generator().manual_seed(7)

    def action(generator: torch.Generator = gen) -> torch.Tensor:
        return torch.rand(6, env.num_actions, generator=generator) * 2 - 1

    sim = env.sim
    assert isinstance(sim, CpuSimulator)
    replay = RawOnEnvStates(env, sim, action, env.cfg.decimation, count=3, every=2)
    assert len(replay.states) == 3  # env steps 0, 2 and 4 of 6
    for _ in range(6):
        twin.step(action(twin_gen))
    assert torch.equal(env.sim.qpos, twin.sim.qpos)  # recording does not change what the env does
    # replaying recorded state 0 is the physics of the env's first step: its qpos is the one the env
    # had when it wrote the actions of step 1 (no reset or push in between)
    replay.save()
    replay.rows[...] = replay.states[0]
    replay.batch.step(nstep=env.cfg.decimation)
    after_one = env.sim.qpos.clone()
    replay.next = 0
    replay.step()
    assert torch.equal(env.sim.qpos, after_one) and replay.next == 1
    fresh = _env()
    fresh_gen = torch.Generator().manual_seed(7)
    fresh.step(action(fresh_gen))
    assert torch.equal(after_one, fresh.sim.qpos)
    # the env's own state back, and its warnings clear: it goes on bit for bit like the twin
    for _ in range(5):
        replay.step()
    replay.restore()
    for _ in range(4):
        obs, reward, *_ = env.step(action())
        twin_obs, twin_reward, *_ = twin.step(action(twin_gen))
        assert torch.equal(reward, twin_reward)
        assert all(torch.equal(obs[group], twin_obs[group]) for group in obs)
