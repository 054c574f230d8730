"""Action terms at a controller rate: the env applies them every `physics_steps_per_tick` physics
steps within one env step, and a NaN caught in any tick ends the episode of that env."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
import torch

from canter.core.errors import ConfigError
from canter.envs.manager_env import ManagerBasedRLEnv
from canter.managers.action import ActionTerm
from canter.mdp.actions import JointAction, JointActionCfg
from canter.tasks import REGISTRY


@dataclass(kw_only=True)
class TickCfg(JointActionCfg):
    steps: int = 1
    poison_tick: int = -1  # write NaN into env 0's velocity at this tick of the first env step

    def build(self, name, env) -> ActionTerm:
        return TickTerm(name, self, env)


class TickTerm(JointAction):
    """Records the sim time at each call; the ctrl written is the scaled action, like a plain term."""

    def __init__(self, name: str, cfg: TickCfg, env: ManagerBasedRLEnv):
        super().__init__(name, cfg, env)
        self.physics_steps_per_tick = cfg.steps
        self.env = env
        self.times: list[float] = []

    def apply(self, ctrl: torch.Tensor, action: torch.Tensor) -> None:
        cfg = self.cfg
        assert isinstance(cfg, TickCfg)
        if len(self.times) == cfg.poison_tick:
            self.env.sim.qvel[0] = float("nan")
        self.times.append(float(self.env.sim.field("time")[1]))
        super().apply(ctrl, action)


def _env(steps: int, decimation: int = 4, poison_tick: int = -1) -> ManagerBasedRLEnv:
    cfg = REGISTRY.get("cartpole").env_cfg()
    cfg.num_envs = 2
    cfg.decimation = decimation
    cfg.actions = {"cart_force": TickCfg(actuators=cfg.actions["cart_force"].actuators, scale=100.0, steps=steps,
                                         poison_tick=poison_tick)}
    env = ManagerBasedRLEnv(cfg)
    env.reset()
    return env


def _term(env: ManagerBasedRLEnv) -> TickTerm:
    term = env.action_manager.term("cart_force")
    assert isinstance(term, TickTerm)
    return term


def test_a_controller_term_runs_every_k_physics_steps():
    env = _env(steps=2, decimation=4)
    for _ in range(3):
        env.step(torch.zeros(2, 1))
    dt = env.physics_dt
    assert _term(env).times == pytest.approx([k * 2 * dt for k in range(6)])
    plain = _env(steps=4, decimation=4)
    plain.step(torch.zeros(2, 1))
    assert _term(plain).times == [0.0]


def test_a_nan_in_an_early_tick_still_ends_that_episode():
    env = _env(steps=1, decimation=4, poison_tick=1)
    _, reward, terminated, _, extras = env.step(torch.zeros(2, 1))
    assert terminated.tolist() == [True, False] and float(reward[0]) == 0.0
    assert int(extras["log"]["Sim/nonfinite_resets_total"]) == 1


def test_a_tick_that_does_not_divide_decimation_is_refused():
    with pytest.raises(ConfigError, match="must divide decimation 4"):
        _env(steps=3, decimation=4)
