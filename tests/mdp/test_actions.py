"""Joint position actions with relative targets: target_t = clamp(target_t-1 + scale * clip(a), ctrlrange),
from the default pose at every episode start, observed by `mdp.joint_pos_target`, saved with the env."""

from __future__ import annotations

import pytest
import torch

from canter import mdp
from canter.core.errors import CanterError
from canter.envs.manager_env import ManagerBasedRLEnv
from canter.mdp.actions import JointAction, JointActionCfg
from canter.scene.entity import actuators
from canter.tasks import REGISTRY

SCALE = 0.1  # the hand family's default


def _env(num_envs: int = 3) -> ManagerBasedRLEnv:
    cfg = REGISTRY.get("hand-cube-axis").env_cfg()
    assert cfg.actions["joint_pos"].scale == SCALE
    cfg.num_envs = num_envs
    cfg.sim.num_threads = 1
    cfg.events.pop("reset_joints")  # joints start at the home pose
    return ManagerBasedRLEnv(cfg)


def _term(env: ManagerBasedRLEnv) -> JointAction:
    term = env.action_manager.term("joint_pos")
    assert isinstance(term, JointAction) and term.cfg.relative
    return term


def test_targets_integrate_the_actions_and_stop_at_the_control_range():
    env = _env()
    env.reset()
    term = _term(env)
    home = term.offset.clone()
    assert torch.equal(term.target, home.expand(3, -1))
    action = torch.zeros(3, term.action_dim)
    action[0] = 0.5
    action[1, 0] = -1.0
    action[2, 0] = 7.0  # clipped to 1 before it is integrated
    env.step(action)
    env.step(action)
    expected = home.expand(3, -1).clone()
    expected[0] += 2 * SCALE * 0.5
    expected[1, 0] -= 2 * SCALE
    expected[2, 0] += 2 * SCALE
    expected = torch.maximum(torch.minimum(expected, term.high), term.low)
    torch.testing.assert_close(term.target, expected)
    # what the servos receive is the target, and the policy observes it relative to the home pose
    torch.testing.assert_close(env.sim.ctrl[:, term.ctrl_ids].to(expected.dtype), expected)
    torch.testing.assert_close(mdp.joint_pos_target(env), (expected - home).float())
    obs = env.observation_manager.compute()["policy"]  # the target is the group's last term
    torch.testing.assert_close(obs[:, -term.action_dim:], (expected - home).float())

    # a held action walks the targets to the servos' control range and stays there
    low, high = term.low.expand(3, -1), term.high.expand(3, -1)
    for _ in range(40):
        env.step(torch.ones(3, term.action_dim))
    torch.testing.assert_close(term.target, high.clone())
    for _ in range(40):
        env.step(-torch.ones(3, term.action_dim))
    torch.testing.assert_close(term.target, low.clone())


def test_a_reset_returns_only_its_envs_targets_to_the_home_pose_for_ids_and_masks():
    env = _env()
    env.reset()
    term = _term(env)
    home = term.offset
    env.step(torch.full((3, term.action_dim), 0.3))
    moved = term.target.clone()
    term.reset(torch.tensor([1]))
    assert torch.equal(term.target[1], home) and torch.equal(term.target[[0, 2]], moved[[0, 2]])
    term.reset(torch.tensor([False, False, True]))  # the warp backend's mask form
    assert torch.equal(term.target[2], home) and torch.equal(term.target[0], moved[0])


def test_the_targets_are_saved_and_restored_with_the_env():
    env = _env()
    env.reset()
    term = _term(env)
    env.step(torch.full((3, term.action_dim), 0.4))
    state = env.state_dict()
    saved = term.target.clone()
    env.step(torch.full((3, term.action_dim), -0.9))
    assert not torch.equal(term.target, saved)
    env.load_state_dict(state)
    assert torch.equal(term.target, saved)


def test_absolute_targets_are_unchanged_by_the_option():
    cfg = REGISTRY.get("hand-cube-axis").env_cfg()
    cfg.actions["joint_pos"].relative = False  # --env.actions.joint-pos.relative False
    cfg.actions["joint_pos"].scale = 0.6
    cfg.num_envs = 2
    cfg.sim.num_threads = 1
    env = ManagerBasedRLEnv(cfg)
    env.reset()
    term = env.action_manager.term("joint_pos")
    assert isinstance(term, JointAction) and not term.cfg.relative
    action = torch.full((2, term.action_dim), 0.5)
    env.step(action)
    env.step(action)  # the same action twice: an absolute target does not move on
    torch.testing.assert_close(term.target, term.offset + 0.3 * torch.ones_like(term.target))
    torch.testing.assert_close(term.state_dict()["target"], term.target)
    # an episode start reports the zero action's target (the manager's last action reads zero too)
    term.reset(torch.tensor([True, False]))
    assert torch.equal(term.target[0], term.offset) and not torch.equal(term.target[1], term.offset)
    torch.testing.assert_close(mdp.joint_pos_target(env)[0], torch.zeros(term.action_dim))


def test_joint_pos_target_names_an_action_term_that_is_not_a_joint_action():
    cfg = REGISTRY.get("arm-grasp-state").env_cfg()
    cfg.num_envs = 1
    env = ManagerBasedRLEnv(cfg)
    with pytest.raises(CanterError, match=r"action term 'ee_delta' \(EndEffectorDeltaAction\) is not a joint action"):
        mdp.joint_pos_target(env, "ee_delta")


def test_relative_effort_actions_are_a_config_error():
    with pytest.raises(CanterError, match="relative"):
        JointActionCfg(actuators=actuators(), offset="zero", relative=True).validate()
