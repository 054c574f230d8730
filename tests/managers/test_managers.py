"""Managers: parameter validation, reward arithmetic, terminated vs truncated, observation
processing, events, commands, curriculum — on the cartpole task with terms swapped in."""

from __future__ import annotations

import pytest
import torch

from canter import mdp
from canter.core.errors import ConfigError
from canter.envs.manager_env import ManagerBasedRLEnv
from canter.managers.curriculum import CurriculumTermCfg
from canter.managers.event import EventTermCfg
from canter.managers.observation import ObsGroupCfg, ObsTermCfg, gnoise, unoise
from canter.managers.reward import RewardTermCfg
from canter.managers.termination import TerminationTermCfg
from canter.mdp.commands import UniformVelocityCommandCfg
from canter.scene.entity import joints
from canter.tasks.ant.env_cfg import ant_env_cfg
from canter.tasks.cartpole.env_cfg import cartpole_env_cfg


def _cfg(num_envs: int = 4):
    cfg = cartpole_env_cfg()
    cfg.num_envs = num_envs
    cfg.sim.num_threads = 1
    return cfg


def ones(env):
    return torch.ones(env.num_envs)


def env_index(env):
    return torch.arange(env.num_envs, dtype=torch.float32)


def test_reward_is_weight_times_term_times_dt_and_sums_per_episode():
    cfg = _cfg()
    cfg.rewards = {
        "one": RewardTermCfg(func=ones, weight=2.0),
        "idx": RewardTermCfg(func=env_index, weight=-0.5),
    }
    env = ManagerBasedRLEnv(cfg)
    env.reset()
    dt = env.step_dt  # 2 * (1/120) s
    _, reward, *_ = env.step(torch.zeros(4, 1))
    expected = 2.0 * 1.0 * dt + (-0.5) * torch.arange(4.0) * dt
    torch.testing.assert_close(reward, expected)
    _, reward, *_ = env.step(torch.zeros(4, 1))
    sums = env.reward_manager.episode_sums
    torch.testing.assert_close(sums[0], torch.full((4,), 2 * 2.0 * dt))
    torch.testing.assert_close(sums[1], -0.5 * torch.arange(4.0) * 2 * dt)


def test_only_positive_rewards_clips_the_summed_reward_but_not_the_term_sums():
    cfg = _cfg()
    cfg.only_positive_rewards = True
    cfg.rewards = {
        "one": RewardTermCfg(func=ones, weight=1.0),
        "idx": RewardTermCfg(func=env_index, weight=-1.0),
    }
    env = ManagerBasedRLEnv(cfg)
    env.reset()
    dt = env.step_dt
    _, reward, *_ = env.step(torch.zeros(4, 1))
    # per env: (1 - index) * dt = [dt, 0, -dt, -2 dt] -> clipped at zero
    torch.testing.assert_close(reward, torch.tensor([dt, 0.0, 0.0, 0.0]))
    torch.testing.assert_close(env.reward_manager.episode_sums[1], -torch.arange(4.0) * dt)


def test_unknown_or_missing_term_parameters_name_the_term():
    cfg = _cfg()
    cfg.rewards = {
        "pole": RewardTermCfg(
            func=mdp.joint_pos_target_l2, weight=1.0, params={"joints": joints("hinge"), "tgt": 0}
        )
    }
    with pytest.raises(ConfigError, match=r"reward term 'pole': unknown parameter 'tgt'"):
        ManagerBasedRLEnv(cfg)
    cfg = _cfg()
    cfg.rewards = {"pole": RewardTermCfg(func=mdp.joint_pos_target_l2, weight=1.0, params={"target": 0.0})}
    with pytest.raises(ConfigError, match=r"reward term 'pole': missing parameter\(s\) joints"):
        ManagerBasedRLEnv(cfg)
    cfg = _cfg()
    cfg.rewards = {
        "pole": RewardTermCfg(func=mdp.joint_vel_l1, weight=1.0, params={"joints": joints("nope")})
    }
    with pytest.raises(ConfigError, match=r"reward term 'pole', parameter 'joints': no joint matches 'nope'"):
        ManagerBasedRLEnv(cfg)


def test_terminated_is_kept_apart_from_time_out():
    cfg = _cfg(2)
    cfg.episode_length_s = 3 * 2 / 120  # three env steps
    cfg.events = {}
    cfg.terminations["cart_out_of_bounds"].params["bounds"] = (-0.5, 0.5)
    env = ManagerBasedRLEnv(cfg)
    env.reset()
    env.sim.qpos[1, 0] = 2.0  # env 1 is out of bounds at once
    _, _, terminated, truncated, _ = env.step(torch.zeros(2, 1))
    assert terminated.tolist() == [False, True] and truncated.tolist() == [False, False]
    env.step(torch.zeros(2, 1))
    _, _, terminated, truncated, extras = env.step(torch.zeros(2, 1))
    assert truncated[0] and not terminated[0]  # env 0 timed out at its third step
    assert extras["episode_length"][0] == 3


def test_a_task_without_time_out_is_rejected():
    cfg = _cfg()
    cfg.terminations = {
        "oob": TerminationTermCfg(
            func=mdp.joint_pos_out_of_manual_limit, params={"joints": joints("slider"), "bounds": (-1.0, 1.0)}
        )
    }
    with pytest.raises(ConfigError, match="time-out"):
        ManagerBasedRLEnv(cfg)


def test_observation_scale_clip_noise_and_history():
    cfg = _cfg(3)
    cfg.observations = {
        "policy": ObsGroupCfg(
            terms={
                "pos": ObsTermCfg(func=mdp.joint_pos, clip=(-0.1, 0.1), scale=10.0),
                "vel": ObsTermCfg(func=mdp.joint_vel, history_length=3),
            }
        ),
        "noisy": ObsGroupCfg(terms={"pos": ObsTermCfg(func=mdp.joint_pos, noise=unoise(0.5))}),
        "clean": ObsGroupCfg(
            terms={"pos": ObsTermCfg(func=mdp.joint_pos, noise=gnoise(1.0))}, enable_corruption=False
        ),
    }
    env = ManagerBasedRLEnv(cfg)
    obs, _ = env.reset()
    assert obs["policy"].shape == (3, 2 + 3 * 2)
    assert obs["policy"].dtype == torch.float32
    q = env.scene.joint_pos.float()
    torch.testing.assert_close(obs["policy"][:, :2], q.clamp(-0.1, 0.1) * 10.0)
    first_vel = env.scene.joint_vel.float()
    torch.testing.assert_close(obs["policy"][:, 2:], first_vel.repeat(1, 3))  # history filled at reset
    noise = obs["noisy"] - q
    assert noise.abs().max() <= 0.5 and noise.abs().max() > 0
    torch.testing.assert_close(obs["clean"], q)
    obs, *_ = env.step(torch.zeros(3, 1))
    history = obs["policy"][:, 2:].reshape(3, 3, 2)
    torch.testing.assert_close(history[:, 1], first_vel)  # shifted: oldest first, newest last
    torch.testing.assert_close(history[:, 2], env.scene.joint_vel.float())


def test_interval_events_fire_per_env_on_their_own_clock():
    fired = torch.zeros(4)

    def count(env, env_ids):
        fired[env_ids] += 1

    cfg = _cfg()
    step_dt = 2 / 120
    cfg.events["tick"] = EventTermCfg(
        func=count, mode="interval", interval_range_s=(3 * step_dt, 3 * step_dt)
    )
    env = ManagerBasedRLEnv(cfg)
    env.reset()
    for _ in range(7):
        env.step(torch.zeros(4, 1))
    assert fired.tolist() == [2, 2, 2, 2]
    with pytest.raises(ConfigError, match="interval_range_s"):
        EventTermCfg(func=count, mode="interval")


def test_velocity_command_respects_ranges_and_resamples():
    cfg = ant_env_cfg()
    cfg.num_envs = 64
    cfg.commands = {
        "base_velocity": UniformVelocityCommandCfg(
            resampling_time_range=(0.1, 0.1),
            lin_vel_x=(0.5, 1.0),
            lin_vel_y=(-0.2, 0.2),
            ang_vel_z=(-0.3, 0.3),
            rel_standing_envs=0.25,
        )
    }
    cfg.observations["policy"].terms["command"] = ObsTermCfg(
        func=mdp.generated_commands, params={"command_name": "base_velocity"}
    )
    env = ManagerBasedRLEnv(cfg)
    env.reset()
    command = env.command_manager.get_command("base_velocity")
    first = command.clone()
    moving = ~env.command_manager.terms["base_velocity"].is_standing_env
    assert 0 < int(moving.sum()) < 64
    assert torch.all((command[moving, 0] >= 0.5) & (command[moving, 0] <= 1.0))
    assert torch.all(command[~moving] == 0)
    for _ in range(3):  # 0.15 s > resampling time
        env.step(torch.zeros(64, 8))
    assert not torch.equal(first, env.command_manager.get_command("base_velocity"))


def test_curriculum_terms_run_at_reset_and_are_logged():
    def widen(env, env_ids, step_size: float):
        env.reward_manager.set_weight("cart_vel", env.reward_manager.weights["cart_vel"] - step_size)
        return env.reward_manager.weights["cart_vel"]

    cfg = _cfg()
    cfg.curriculum = {"cart_vel_weight": CurriculumTermCfg(func=widen, params={"step_size": 0.01})}
    env = ManagerBasedRLEnv(cfg)
    _, extras = env.reset()
    assert extras["log"]["Curriculum/cart_vel_weight"] == pytest.approx(-0.02)


def test_observation_noise_is_one_draw_per_group_and_kind():
    """A vector group's noise is one U(0, 1) draw over all its columns from the env generator, mapped
    to each term's [low, high] (0 where a term has no uniform noise), then one N(0, 1) draw scaled by
    each term's std (0 elsewhere); then the terms' clips and scales: bitwise what this sequence of
    whole-group operations gives, and nothing else is drawn."""
    cfg = _cfg(5)
    cfg.observations = {
        "policy": ObsGroupCfg(
            terms={
                "pos": ObsTermCfg(func=mdp.joint_pos, noise=unoise(0.3), scale=2.0),
                "vel": ObsTermCfg(func=mdp.joint_vel, noise=gnoise(0.7), clip=(-0.5, 0.5)),
            }
        ),
        "critic": ObsGroupCfg(terms={"pos": ObsTermCfg(func=mdp.joint_pos, noise=unoise(9.0))}, enable_corruption=False),
    }
    env = ManagerBasedRLEnv(cfg)
    env.reset()
    env.step(torch.full((5, 1), 0.3))
    generator = torch.Generator().set_state(env.generator.get_state())
    env.scene.invalidate()
    obs = env.observation_manager.compute()
    q, qd = env.scene.joint_pos.float(), env.scene.joint_vel.float()
    nq, nv = q.shape[1], qd.shape[1]
    values = torch.cat((q, qd), dim=1)
    width = torch.tensor([0.6] * nq + [0.0] * nv)
    low = torch.tensor([-0.3] * nq + [0.0] * nv)
    std = torch.tensor([0.0] * nq + [0.7] * nv)
    values = torch.addcmul(values, torch.rand(values.shape, generator=generator), width) + low
    values = torch.addcmul(values, torch.randn(values.shape, generator=generator), std)
    lo = torch.tensor([-torch.inf] * nq + [-0.5] * nv)
    hi = torch.tensor([torch.inf] * nq + [0.5] * nv)
    values = torch.clamp(values, lo, hi) * torch.tensor([2.0] * nq + [1.0] * nv)
    assert torch.equal(obs["policy"], values)
    # the pos columns are q plus uniform noise within ±0.3 (times the scale), the vel columns have
    # gaussian noise, clipped
    assert ((obs["policy"][:, :nq] / 2.0 - q).abs() <= 0.3 + 1e-6).all()
    assert (obs["policy"][:, nq:].abs() <= 0.5).all()
    assert torch.equal(obs["critic"], q)
    assert torch.equal(env.generator.get_state(), generator.get_state())  # nothing else was drawn
    env.cfg.observations["critic"].enable_corruption = True  # switched on later: the noise follows
    env.scene.invalidate()
    assert not torch.equal(env.observation_manager.compute()["critic"], q)


def test_velocity_command_resample_is_the_plain_sequence_of_draws():
    """Resampling draws, per env, time, vx, vy, wz, heading, heading-flag and standing-flag numbers
    from the env generator: bitwise the same as drawing them one range after another."""
    cfg = ant_env_cfg()
    cfg.num_envs = 40
    command_cfg = UniformVelocityCommandCfg(
        resampling_time_range=(0.5, 2.0),
        lin_vel_x=(-0.4, 1.3),
        lin_vel_y=(-0.2, 0.6),
        ang_vel_z=(-0.9, 0.3),
        heading_command=True,
        rel_heading_envs=0.5,
        rel_standing_envs=0.3,
    )
    cfg.commands = {"base_velocity": command_cfg}
    env = ManagerBasedRLEnv(cfg)
    env.reset()
    term = env.command_manager.terms["base_velocity"]
    ids = torch.tensor([1, 4, 5, 17, 30, 31, 39])
    generator = torch.Generator().set_state(env.generator.get_state())
    before = term.vel_command.clone()
    term.resample(ids)

    def draw(low: float, high: float) -> torch.Tensor:
        return low + (high - low) * torch.rand(ids.numel(), generator=generator)

    time_left = draw(0.5, 2.0)
    velocity = torch.stack([draw(-0.4, 1.3), draw(-0.2, 0.6), draw(-0.9, 0.3)], dim=1)
    heading = draw(-torch.pi, torch.pi)
    heading_env = draw(0.0, 1.0) < 0.5
    standing = draw(0.0, 1.0) < 0.3
    velocity[standing] = 0.0
    assert torch.equal(term.time_left[ids], time_left)
    assert torch.equal(term.vel_command[ids], velocity)
    assert torch.equal(term.heading_target[ids], heading)
    assert torch.equal(term.is_heading_env[ids], heading_env)
    assert torch.equal(term.is_standing_env[ids], standing)
    others = torch.ones(40, dtype=torch.bool)
    others[ids] = False
    assert torch.equal(term.vel_command[others], before[others])
    assert 0 < int(standing.sum()) < ids.numel() or 0 < int(heading_env.sum()) < ids.numel()


def test_group_clip_bounds_every_value_after_scale_and_history():
    cfg = _cfg(3)

    def big(env):
        return torch.tensor([[-1e8, 5.0], [3.0, 1e8], [0.5, -0.5]])

    cfg.observations = {
        "policy": ObsGroupCfg(terms={"v": ObsTermCfg(func=big, scale=10.0, history_length=2)}, clip=100.0),
        "raw": ObsGroupCfg(terms={"v": ObsTermCfg(func=big, scale=10.0)}),
    }
    env = ManagerBasedRLEnv(cfg)
    obs, _ = env.reset()
    expected = torch.tensor([[-100.0, 50.0], [30.0, 100.0], [5.0, -5.0]])
    torch.testing.assert_close(obs["policy"], expected.repeat(1, 2))  # the history holds bounded values
    torch.testing.assert_close(obs["raw"], torch.tensor([[-1e9, 50.0], [30.0, 1e9], [5.0, -5.0]]))  # no group clip
    cfg.observations["policy"].clip = 0.0
    with pytest.raises(ConfigError, match="clip must be > 0"):
        ManagerBasedRLEnv(cfg)


def test_clip_actions_bounds_what_the_actuators_rewards_and_observations_see():
    cfg = _cfg(2)
    cfg.clip_actions = 100.0
    cfg.rewards = {"rate": RewardTermCfg(func=mdp.action_rate_l2, weight=-1.0)}
    cfg.observations = {"policy": ObsGroupCfg(terms={"a": ObsTermCfg(func=mdp.last_action)})}
    env = ManagerBasedRLEnv(cfg)
    env.reset()
    obs, reward, *_ = env.step(torch.tensor([[1e8], [-3.0]]))
    torch.testing.assert_close(env.action_manager.action, torch.tensor([[100.0], [-3.0]]))
    torch.testing.assert_close(obs["policy"], torch.tensor([[100.0], [-3.0]]))
    torch.testing.assert_close(reward, -torch.tensor([100.0**2, 3.0**2]) * env.step_dt)
    cfg.clip_actions = -1.0
    with pytest.raises(ConfigError, match="clip_actions"):
        ManagerBasedRLEnv(cfg)
