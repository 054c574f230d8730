"""The real-time loop: ticks at the requested rate, writes the commands the metadata describes, and
reports the task's return exactly as an offline run of the same steps."""

from __future__ import annotations

import pytest
import torch

from canter.core.errors import CanterError
from canter.export.describe import describe_policy
from canter.export.module import ExportableActor
from canter.export.onnx_export import save_onnx
from canter.export.realtime import RealtimeCfg, run_realtime, sensor_reader, stand_in_env
from canter.export.runtime import PolicyRuntime

from .helpers import dog_env, trained_looking_policy


@pytest.fixture(scope="module")
def policy_file(env, policies, tmp_path_factory):
    actor = ExportableActor(policies["gru"])
    return save_onnx(actor, describe_policy(env, actor, "dog-flat"), tmp_path_factory.mktemp("rt") / "gru.onnx")


@pytest.mark.parametrize(("rate", "ticks"), [(50.0, 15), (100.0, 30)])
def test_loop_runs_its_ticks_and_writes_the_metadata_commands(policy_file, rate, ticks):
    result = run_realtime(PolicyRuntime(policy_file), "dog-flat", RealtimeCfg(rate_hz=rate, duration_s=0.3, seed=1))
    assert result["scheduled_ticks"] == ticks and result["ticks"] + result["skipped_ticks"] == ticks
    assert result["rate_hz"] == rate and result["trained_rate_hz"] == pytest.approx(50.0)
    assert result["ctrl_max_abs_diff"] < 1e-6  # runtime.ctrl(a) == what the env wrote into MuJoCo
    for key in ("inference_us", "work_us", "period_jitter_us"):
        assert set(result[key]) == {"p50", "p99", "max", "mean"}
        assert 0 <= result[key]["p50"] <= result[key]["p99"] <= result[key]["max"]
    assert result["inference_us"]["p50"] > 0 and result["work_us"]["p50"] > result["inference_us"]["p50"]
    assert 0 <= result["deadline_misses"] <= result["ticks"]


def test_the_ctrl_check_holds_under_the_action_path_randomization_of_a_dr_task(policy_file):
    """dog-flat-dr delays what the actuators receive by up to 2 control steps (hand-cube-dr also adds noise and
    bias): the check maps the actions they received (ActionManager.received_action), so it holds to float
    rounding (it read 3.2 before, the policy's own actions mapped)."""
    result = run_realtime(PolicyRuntime(policy_file), "dog-flat-dr", RealtimeCfg(duration_s=1.5, seed=3, paced=False))
    runtime = PolicyRuntime(policy_file)
    env = stand_in_env(runtime, "dog-flat-dr", 50.0, seed=3)
    env.reset()
    manager = env.action_manager
    assert manager.max_delay > 0  # the task randomizes the action path
    moved = 0.0
    with torch.no_grad():
        for _ in range(20):
            env.step(torch.from_numpy(runtime.act_raw(*sensor_reader(env, runtime)()))[None])
            moved = max(moved, float((manager.received_action() - manager.action).abs().max()))
    assert moved > 1e-3  # what the actuators received is not the policy's action
    assert result["ticks"] > 50 and result["ctrl_max_abs_diff"] < 1e-5


def test_a_loop_stopped_before_its_first_tick_reports_no_ticks(policy_file):
    """A stop signal during start-up (should_stop true at once): a report of nothing, not a traceback."""
    result = run_realtime(PolicyRuntime(policy_file), "dog-flat", RealtimeCfg(duration_s=1.0), should_stop=lambda: True)
    assert result["ticks"] == 0 and result["duration_s"] == 0.0 and result["episodes"] == 0
    assert result["inference_us"] is None and result["work_us"] is None and result["period_jitter_us"] is None


def test_loop_return_equals_an_offline_run_of_the_same_steps(policy_file):
    result = run_realtime(PolicyRuntime(policy_file), "dog-flat", RealtimeCfg(duration_s=0.4, seed=2))
    runtime = PolicyRuntime(policy_file)
    env = stand_in_env(runtime, "dog-flat", 50.0, seed=2)
    read = sensor_reader(env, runtime)
    env.reset()
    total = 0.0
    with torch.no_grad():
        for _ in range(result["ticks"]):
            _, reward, terminated, truncated, _ = env.step(torch.from_numpy(runtime.act_raw(*read()))[None])
            total += float(reward[0])
            assert not bool(terminated[0] | truncated[0])
    assert result["episodes"] == 0
    assert result["unfinished_episode_return"] == pytest.approx(total, rel=1e-9, abs=1e-12)
    assert total != 0.0


def test_rates_and_tasks_that_do_not_fit_the_policy_are_refused(policy_file, tmp_path):
    runtime = PolicyRuntime(policy_file)
    with pytest.raises(CanterError, match="--rate 30 Hz is not a whole number of physics steps"):
        run_realtime(runtime, "dog-flat", RealtimeCfg(rate_hz=30.0, duration_s=0.1))
    with pytest.raises(CanterError, match="task 'cartpole' steps physics at"):
        run_realtime(runtime, "cartpole", RealtimeCfg(duration_s=0.1))
    history_env = dog_env(num_envs=1, history_length=2)
    actor = ExportableActor(trained_looking_policy(history_env, "mlp"))
    other = save_onnx(actor, describe_policy(history_env, actor, "dog-flat"), tmp_path / "h.onnx")
    with pytest.raises(CanterError, match=r"task 'dog-flat' observes .* the policy expects .*\('joint_pos', 24\)"):
        run_realtime(PolicyRuntime(other), "dog-flat", RealtimeCfg(duration_s=0.1))
    with pytest.raises(CanterError, match="--duration: must be > 0"):
        RealtimeCfg(duration_s=0.0)


def test_loop_names_what_ended_each_episode(tmp_path):
    """A cartpole policy that always pushes right drives the cart out of its bounds within a second."""
    from torch import nn

    from canter.core.rng import make_generator
    from canter.envs.manager_env import ManagerBasedRLEnv
    from canter.rl.config import PolicyCfg
    from canter.rl.factory import make_policy
    from canter.tasks import REGISTRY

    cfg = REGISTRY.get("cartpole").env_cfg()
    cfg.num_envs = 1
    env = ManagerBasedRLEnv(cfg)
    policy = make_policy(env.observation_shapes, env.num_actions, PolicyCfg(), init_generator=make_generator(0, "cpu"))
    with torch.no_grad():
        last = [m for m in policy.actor if isinstance(m, nn.Linear)][-1]
        last.weight.zero_()
        last.bias.fill_(1.0)
    actor = ExportableActor(policy)
    runtime = PolicyRuntime(save_onnx(actor, describe_policy(env, actor, "cartpole"), tmp_path / "push.onnx"))
    result = run_realtime(runtime, "cartpole", RealtimeCfg(duration_s=2.0, seed=0))
    assert result["episodes"] >= 2 and len(result["episode_endings"]) == result["episodes"]
    assert result["ended_by"] == {"cart_out_of_bounds": 1.0}
    assert result["ctrl_max_abs_diff"] < 1e-6
    # --episodes: the loop stops once they have ended; --unpaced runs the same ticks back to back, so it
    # plays the same episodes (no deadlines or jitter to report), in a fraction of the time
    paced = run_realtime(runtime, "cartpole", RealtimeCfg(episodes=2, seed=0))
    unpaced = run_realtime(runtime, "cartpole", RealtimeCfg(episodes=2, seed=0, paced=False))
    for run in (paced, unpaced):
        assert run["episodes"] == 2 and run["episodes_asked"] == 2 and run["unfinished_episode_return"] == 0.0
    assert unpaced["episode_returns"] == paced["episode_returns"] == result["episode_returns"][:2]
    assert unpaced["ticks"] == paced["ticks"] and unpaced["duration_s"] < paced["duration_s"] / 3
    assert paced["deadline_misses"] is not None and paced["period_jitter_us"] is not None
    assert unpaced["deadline_misses"] is None and unpaced["period_jitter_us"] is None and unpaced["scheduled_ticks"] is None
    with pytest.raises(CanterError, match="--episodes: must be >= 1"):
        RealtimeCfg(episodes=0)


def test_loop_holds_a_command_and_refuses_photos_a_task_lacks(policy_file):
    runtime = PolicyRuntime(policy_file)
    env = stand_in_env(runtime, "dog-flat", 50.0, seed=0, command=(0.7, -0.2, 0.3))
    env.reset()
    for _ in range(3):
        terms, _ = sensor_reader(env, runtime)()
        assert terms["velocity_commands"].tolist() == pytest.approx([0.7, -0.2, 0.3])
        env.step(torch.zeros(1, env.num_actions))
    result = run_realtime(runtime, "dog-flat", RealtimeCfg(duration_s=0.1, command=(0.7, -0.2, 0.3)))
    assert result["command"] == [0.7, -0.2, 0.3] and result["photos"] is None
    with pytest.raises(CanterError, match="--photos: this task composes no camera image over photos"):
        run_realtime(runtime, "dog-flat", RealtimeCfg(duration_s=0.1, photos="unseen"))
