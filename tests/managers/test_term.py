"""The term lifecycle every manager shares: a stateful term in each of the seven managers is reset
only for the envs that reset, and saved with the env so that a save/load round trip reproduces the
following steps bit for bit."""

from __future__ import annotations

import copy
from dataclasses import dataclass

import pytest
import torch

from canter.core.errors import CanterError
from canter.envs.manager_env import ManagerBasedRLEnv
from canter.managers.command import CommandTerm, CommandTermCfg
from canter.managers.curriculum import CurriculumTermCfg
from canter.managers.event import EventTermCfg
from canter.managers.observation import ObsTermCfg
from canter.managers.reward import RewardTermCfg
from canter.managers.term import ManagerTerm
from canter.managers.termination import TerminationTermCfg
from canter.mdp.actions import JointAction, JointActionCfg
from canter.scene.entity import actuators
from canter.tasks.cartpole.env_cfg import cartpole_env_cfg

NUM_ENVS = 6


class Counter:
    """Per-env state: calls since the env's last reset, and the last U(0, 1) drawn from the env's
    generator. Mixed into a term of every kind."""

    count: torch.Tensor
    noise: torch.Tensor

    def _init_counter(self, env: ManagerBasedRLEnv) -> None:
        self.count = torch.zeros(env.num_envs, dtype=torch.long)
        self.noise = torch.zeros(env.num_envs)

    def _tick(self, env: ManagerBasedRLEnv) -> None:
        self.count += 1
        self.noise = torch.rand(env.num_envs, generator=env.generator)

    def reset(self, env_ids: torch.Tensor) -> None:
        self.count[env_ids] = 0
        self.noise[env_ids] = 0.0

    def state_dict(self) -> dict[str, torch.Tensor]:
        return {"count": self.count.clone(), "noise": self.noise.clone()}


class CounterTerm(Counter, ManagerTerm):
    """Observation / reward / termination term: (env) -> value; event / curriculum: (env, env_ids)."""

    def __init__(self, cfg, env):
        super().__init__(cfg, env)
        self._init_counter(env)


class CounterObs(CounterTerm):
    def __call__(self, env):
        self._tick(env)
        return torch.stack((self.count.float(), self.noise), dim=1)


class CounterReward(CounterTerm):
    def __call__(self, env):
        self._tick(env)
        return self.noise + self.count.float()


class CounterTermination(CounterTerm):
    def __call__(self, env):
        self._tick(env)
        return self.count >= 7  # every env ends 7 steps after its reset


class CounterEvent(CounterTerm):
    def __call__(self, env, env_ids):
        self._tick(env)


class CounterCurriculum(CounterTerm):
    """Counts the resets of each env it saw (it runs just before its own reset of those envs)."""

    def __call__(self, env, env_ids):
        self.count[env_ids] += 1
        self.noise[env_ids] = torch.rand(env_ids.numel(), generator=env.generator)
        return self.count.float().mean()


@dataclass(kw_only=True)
class CounterActionCfg(JointActionCfg):
    def build(self, name, env):
        return CounterAction(name, self, env)


class CounterAction(Counter, JointAction):
    """The cart force plus noise that depends on the counter: the state steers the physics."""

    def __init__(self, name, cfg, env):
        super().__init__(name, cfg, env)
        self._init_counter(env)

    def apply(self, ctrl, action):
        self._tick(self.env)
        super().apply(ctrl, action + (0.1 * self.noise * (self.count % 3))[:, None].to(action.dtype))


@dataclass(kw_only=True)
class CounterCommandCfg(CommandTermCfg):
    def build(self, env):
        return CounterCommand(self, env)


class CounterCommand(Counter, CommandTerm):
    def __init__(self, cfg, env):
        super().__init__(cfg, env)
        self._init_counter(env)

    @property
    def command(self):
        return torch.stack((self.count.float(), self.noise), dim=1)

    def _resample(self, env_ids):
        self.noise[env_ids] = torch.rand(env_ids.numel(), generator=self.env.generator)

    def _update(self, dt):
        self.count += 1

    def reset(self, env_ids):
        Counter.reset(self, env_ids)
        self.resample(env_ids)

    def state_dict(self):
        return {"time_left": self.time_left.clone(), **Counter.state_dict(self)}


def _env() -> ManagerBasedRLEnv:
    cfg = cartpole_env_cfg()
    cfg.num_envs = NUM_ENVS
    cfg.sim.num_threads = 1
    cfg.actions = {"cart_force": CounterActionCfg(actuators=actuators("cart_force"), scale=100.0)}
    cfg.commands = {"counter": CounterCommandCfg(resampling_time_range=(0.05, 0.2))}
    cfg.observations["policy"].terms["counter"] = ObsTermCfg(func=CounterObs)
    cfg.observations["critic"] = copy.deepcopy(cfg.observations["policy"])  # the same term twice
    cfg.rewards["counter"] = RewardTermCfg(func=CounterReward, weight=0.5)
    cfg.terminations["counter"] = TerminationTermCfg(func=CounterTermination)
    cfg.events["counter"] = EventTermCfg(func=CounterEvent, mode="interval", interval_range_s=(0.03, 0.1))
    cfg.curriculum = {"counter": CurriculumTermCfg(func=CounterCurriculum)}
    env = ManagerBasedRLEnv(cfg)
    env.reset()
    return env


def _counters(env: ManagerBasedRLEnv) -> dict[str, Counter]:
    """Every dummy term, by manager: the stateful terms each manager tracks."""
    found = {}
    for kind in ("action", "command", "observation", "reward", "termination", "event", "curriculum"):
        manager = getattr(env, f"{kind}_manager")
        for key, term in manager._stateful.items():
            if isinstance(term, Counter):
                found[f"{kind}/{key}"] = term
    return found


def _actions(step: int) -> torch.Tensor:
    return torch.linspace(-1.0, 1.0, NUM_ENVS)[:, None] * ((-1) ** step)


def _rollout(env: ManagerBasedRLEnv, steps: int) -> list[torch.Tensor]:
    out = []
    for step in range(steps):
        obs, reward, terminated, truncated, _ = env.step(_actions(step))
        out += [obs["policy"], obs["critic"], reward, terminated, truncated]
        out += [t.count.clone() for t in _counters(env).values()] + [t.noise.clone() for t in _counters(env).values()]
    return out


def test_every_manager_tracks_its_stateful_terms():
    env = _env()
    assert sorted(_counters(env)) == [
        "action/cart_force",
        "command/counter",
        "curriculum/counter",
        "event/counter",
        "observation/critic/counter",
        "observation/policy/counter",
        "reward/counter",
        "termination/counter",
    ]


def test_reset_clears_only_the_given_envs_in_every_manager():
    env = _env()
    for step in range(3):
        env.step(_actions(step))
    env.curriculum_manager.reset(torch.arange(NUM_ENVS))  # runs the curriculum term on every env
    env.event_manager.apply_interval(1.0)  # every interval event falls due
    for term in _counters(env).values():
        term.count += 1  # every env counted at least once
    before = {name: t.count.clone() for name, t in _counters(env).items()}
    ids = torch.tensor([1, 4])
    others = torch.tensor([0, 2, 3, 5])
    env.action_manager.reset(ids)
    env.command_manager.reset(ids)
    env.observation_manager.reset(ids)
    env.reward_manager.reset(ids)
    env.termination_manager.reset(ids)
    env.event_manager.reset(ids)
    env.curriculum_manager.reset(ids)
    for name, term in _counters(env).items():
        assert term.count[ids].tolist() == [0, 0], name
        assert torch.equal(term.count[others], before[name][others]), name
        assert (before[name][others] > 0).all(), name


def test_save_and_load_reproduce_the_following_steps_bit_for_bit():
    env = _env()
    _rollout(env, 5)
    saved = copy.deepcopy(env.state_dict())
    first = _rollout(env, 12)
    env.load_state_dict(copy.deepcopy(saved))
    second = _rollout(env, 12)
    assert len(first) == len(second)
    for a, b in zip(first, second, strict=True):
        assert torch.equal(a, b)
    # the dummy termination ends episodes every 7 steps: resets happened inside the compared steps
    assert any(bool(t.any()) for t in first[3::21])


def test_a_fresh_env_loads_the_state_of_another_and_continues_identically():
    env = _env()
    _rollout(env, 4)
    saved = copy.deepcopy(env.state_dict())
    expected = _rollout(env, 8)
    other = _env()
    other.load_state_dict(saved)
    assert all(torch.equal(a, b) for a, b in zip(expected, _rollout(other, 8), strict=True))


def test_loading_a_state_without_a_stateful_term_names_the_term():
    env = _env()
    state = env.state_dict()
    del state["termination"]["terms"]["counter"]
    with pytest.raises(CanterError, match="termination term 'counter'"):
        env.load_state_dict(state)
