"""`canter bench sb3`'s raw ceiling after training: measured on the states the trained policy drives
the env through (the policy acts on the env's own observations), and on random controls."""

from __future__ import annotations

import pytest
import torch

from canter.bench.env import RECORD_EVERY, RECORDED_STATES
from canter.bench.sb3 import gymnasium_ant_xml, raw_fps_at_the_end
from canter.runs.args import make_env, parse_train_args


class _RecordingPolicy:
    """Acts a constant action; keeps the observations it was given."""

    def __init__(self, num_actions: int, value: float):
        self.num_actions, self.value, self.seen = num_actions, value, []

    def act_inference(self, obs: dict[str, torch.Tensor]) -> torch.Tensor:
        self.seen.append({k: v.clone() for k, v in obs.items()})
        assert not torch.is_grad_enabled()
        return torch.full((next(iter(obs.values())).shape[0], self.num_actions), self.value)


def test_raw_at_the_end_replays_states_the_policy_drove_the_env_through():
    pytest.importorskip("gymnasium")
    model_path = gymnasium_ant_xml()
    args = parse_train_args("ant-classic", ["--model", str(model_path), "--num-envs", "8", "--quiet"])
    env = make_env(args)
    env.reset()
    policy = _RecordingPolicy(env.num_actions, 0.5)
    result = raw_fps_at_the_end(env, policy, model_path, seconds=0.05, repeats=2)
    assert set(result) == {"random_controls", "policy_states"}
    assert all(value > 0 for value in result.values())
    # one policy call per env step recorded, each on the observations the env had then
    assert len(policy.seen) == RECORDED_STATES * RECORD_EVERY
    last = policy.seen[-1]
    assert all(not torch.equal(last[k], policy.seen[0][k]) for k in last)  # the env moved on between calls
    # the env was stepped with the policy's controls (ant-classic: ctrl = the action) and handed back
    # on the last of those states
    ctrl = env.sim.ctrl
    assert torch.allclose(ctrl, torch.full_like(ctrl, 0.5))


def test_a_bad_train_option_fails_before_anything_is_measured(monkeypatch):
    pytest.importorskip("gymnasium")
    import canter.bench.sb3 as sb3
    from canter.cli.main import main
    from canter.core.errors import CanterError

    def measured(*args, **kwargs):
        raise AssertionError("the raw ceiling was measured before the options were checked")

    monkeypatch.setattr(sb3, "raw_batch_fps", measured)
    with pytest.raises(CanterError, match=r"unrecognized options: --agent\.algo\.no-such-field 1"):
        main(["bench", "sb3", "--no-sb3", "--minutes", "0.01", "--agent.algo.no-such-field", "1"])
