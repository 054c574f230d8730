"""Config validation: the shared field checks, errors that name the dotted field, validation that
runs again after fields are set by hand or by the command-line parser."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

import pytest
import tyro

from canter.core.errors import ConfigError
from canter.core.validate import (
    Validated,
    deferred_validation,
    require_at_least,
    require_choice,
    require_finite,
    require_in_range,
    require_pair,
    require_positive,
    validate_tree,
)
from canter.envs.env_cfg import EnvCfg
from canter.envs.manager_env import ManagerBasedRLEnv
from canter.managers.reward import RewardTermCfg
from canter.mdp.commands import UniformVelocityCommandCfg
from canter.rl.config import AlgoCfg, PolicyCfg
from canter.rl.runner import RunnerCfg
from canter.sim.config import SimCfg
from canter.tasks import REGISTRY
from canter.tasks.cartpole.env_cfg import cartpole_env_cfg


@dataclass(kw_only=True)
class Leaf(Validated):
    rate: float = 1.0
    mode: Literal["a", "b"] | None = "a"

    def validate(self) -> None:
        require_positive(self, "rate")
        require_choice(self, "mode")


@dataclass(kw_only=True)
class Tree(Validated):
    count: int = 1
    leaves: dict[str, Leaf] = field(default_factory=lambda: {"x": Leaf()})
    chain: tuple[Leaf, ...] = ()

    def validate(self) -> None:
        require_at_least(self, "count", 1, integer=True)


@dataclass
class Numbers:
    value: object = 0.0
    pair: object = (0.0, 1.0)


@pytest.mark.parametrize(
    ("check", "value", "message"),
    [
        (lambda c: require_finite(c, "value"), math.nan, "value: must be finite, got nan"),
        (lambda c: require_finite(c, "value"), -math.inf, "value: must be finite, got -inf"),
        (lambda c: require_finite(c, "value"), "abc", "value: must be a number, got 'abc'"),
        (lambda c: require_finite(c, "value"), True, "value: must be a number, got True"),
        (lambda c: require_positive(c, "value"), 0.0, r"value: must be > 0, got 0.0"),
        (lambda c: require_at_least(c, "value", 1, integer=True), 1.5, "value: must be an integer, got 1.5"),
        (lambda c: require_at_least(c, "value", 1), 0, "value: must be >= 1, got 0"),
        (lambda c: require_in_range(c, "value", 0.0, 1.0), 1.5, r"value: must be in \[0.0, 1.0\], got 1.5"),
    ],
)
def test_field_checks_name_the_field_and_the_value(check, value, message):
    with pytest.raises(ConfigError, match=f"^{message}$"):
        check(Numbers(value=value))


def test_pair_check():
    require_pair(Numbers(pair=(0.0, 0.0)), "pair")
    with pytest.raises(ConfigError, match=r"^pair: need low <= high, got \(2.0, 1.0\)$"):
        require_pair(Numbers(pair=(2.0, 1.0)), "pair")
    with pytest.raises(ConfigError, match=r"^pair: need low < high"):
        require_pair(Numbers(pair=(1.0, 1.0)), "pair", strict=True)
    with pytest.raises(ConfigError, match=r"^pair: values must be >= 0"):
        require_pair(Numbers(pair=(-1.0, 1.0)), "pair", minimum=0.0)
    with pytest.raises(ConfigError, match=r"^pair: must hold two finite numbers"):
        require_pair(Numbers(pair=(0.0, math.nan)), "pair")
    with pytest.raises(ConfigError, match=r"^pair: must be a \(low, high\) pair, got 3.0$"):
        require_pair(Numbers(pair=3.0), "pair")


def test_literal_choices_come_from_the_annotation():
    Leaf(mode=None)  # Literal[...] | None allows None
    with pytest.raises(ConfigError, match=r"^Leaf.mode: 'c' is not one of 'a', 'b', None$"):
        Leaf(mode="c")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"^sim.backend: 'gpu' is not one of 'cpu', 'warp'$"):
        SimCfg(backend="gpu")  # type: ignore[arg-type]


def test_validate_tree_names_nested_fields_by_path_and_reruns_after_edits():
    tree = Tree(chain=(Leaf(), Leaf()))
    validate_tree(tree)
    tree.leaves["x"].rate = math.inf  # set after construction: nothing checked it yet
    with pytest.raises(ConfigError, match=r"^leaves.x.rate: must be finite, got inf$"):
        validate_tree(tree)
    tree.leaves["x"].rate = 1.0
    tree.chain[1].rate = -1.0
    with pytest.raises(ConfigError, match=r"^cfg.chain.1.rate: must be > 0, got -1.0$"):
        validate_tree(tree, "cfg")
    tree.chain[1].rate = 1.0
    tree.count = 0
    with pytest.raises(ConfigError, match=r"^count: must be >= 1, got 0$"):
        validate_tree(tree)


def test_deferred_validation_builds_first_and_validate_tree_reports_by_path():
    with deferred_validation():
        leaf = Leaf(rate=math.nan)  # no error here
    with pytest.raises(ConfigError, match=r"^leaves.bad.rate: must be finite, got nan$"):
        validate_tree(Tree(leaves={"bad": leaf}))
    with pytest.raises(ConfigError, match=r"^Leaf\.rate: must be finite, got nan$"):
        Leaf(rate=math.nan)  # outside the block, construction validates


def test_a_nan_reward_weight_is_a_config_error_naming_the_term():
    with pytest.raises(ConfigError, match=r"^RewardTermCfg.weight: must be finite, got nan$"):
        RewardTermCfg(func=lambda env: env, weight=math.nan)
    cfg = cartpole_env_cfg()
    cfg.rewards["alive"].weight = math.nan  # as a parser or a script sets it
    with pytest.raises(ConfigError, match=r"^rewards.alive.weight: must be finite, got nan$"):
        validate_tree(cfg)
    with pytest.raises(ConfigError, match=r"^rewards.alive.weight: must be finite, got nan$"):
        ManagerBasedRLEnv(cfg)  # the env validates the whole tree before building anything


def test_command_line_overrides_are_validated_by_path():
    with deferred_validation():
        cfg = tyro.cli(
            EnvCfg,
            default=cartpole_env_cfg(),
            args=["--rewards.alive.weight", "nan"],
            config=(tyro.conf.AvoidSubcommands,),
        )
    with pytest.raises(ConfigError, match=r"^env.rewards.alive.weight: must be finite, got nan$"):
        validate_tree(cfg, "env")


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: UniformVelocityCommandCfg(lin_vel_x=(1.0, -1.0)), r"lin_vel_x: need low <= high"),
        (lambda: UniformVelocityCommandCfg(rel_standing_envs=2.0), r"rel_standing_envs: must be in \[0.0, 1.0\]"),
        (lambda: UniformVelocityCommandCfg(resampling_time_range=(0.0, 1.0)), "resampling_time_range: need 0 < low"),
        (lambda: RunnerCfg(max_time_s=math.nan), r"^agent.max_time_s: must be finite, got nan$"),
        (lambda: RunnerCfg(save_interval=0), r"^agent.save_interval: must be >= 1, got 0$"),
        (lambda: AlgoCfg(learning_rate=math.nan), r"^algo.learning_rate: must be finite, got nan$"),
        (lambda: AlgoCfg(num_steps_per_env=2.5), r"^algo.num_steps_per_env: must be an integer"),  # type: ignore[arg-type]
        (lambda: PolicyCfg(activation="gelu"), r"^policy.activation: 'gelu' is not one of 'elu', 'relu', 'tanh'$"),  # type: ignore[arg-type]
        (lambda: SimCfg(timestep=math.inf), r"^sim.timestep: must be finite, got inf$"),
        (lambda: EnvCfg(model_path="x", episode_length_s=math.nan), r"^env.episode_length_s: must be finite"),
    ],
)
def test_configs_validate_at_construction(make, message):
    with pytest.raises(ConfigError, match=message):
        make()


def test_agent_overrides_after_construction_are_caught_by_validate_tree():
    agent = RunnerCfg()
    agent.algo.num_mini_batches = 0
    with pytest.raises(ConfigError, match=r"^agent.algo.num_mini_batches: must be >= 1, got 0$"):
        validate_tree(agent, "agent")


@pytest.mark.parametrize("task", REGISTRY.names())
def test_every_task_config_validates(task: str):
    spec = REGISTRY.get(task)
    validate_tree(spec.env_cfg(), "env")
    if spec.agent_cfg is not None:
        validate_tree(spec.agent_cfg(), "agent")
