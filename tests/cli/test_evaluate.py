"""canter eval's episode accounting: every env contributes its first ⌈episodes / num_envs⌉ episodes,
so episodes that end early (successes) are not counted in place of slow ones (time-outs)."""

from __future__ import annotations

from types import SimpleNamespace

import torch

from canter.cli.play_eval import evaluate


class TwoSpeedEnv:
    """Env 0 succeeds after 2 steps, every other env times out after 10; 'success'/'time_out' ends."""

    def __init__(self, num_envs: int):
        self.num_envs, self.num_actions, self.device = num_envs, 1, torch.device("cpu")
        self.length = torch.tensor([2] + [10] * (num_envs - 1))
        self.t = torch.zeros(num_envs, dtype=torch.long)
        self.termination_manager = SimpleNamespace(names=["success", "time_out"],
                                                   term_dones=torch.zeros(2, num_envs, dtype=torch.bool))

    def reset(self):
        self.t.zero_()
        return {"policy": torch.zeros(self.num_envs, 1)}, {}

    def step(self, actions):
        self.t += 1
        done = self.t >= self.length
        success = done & (self.length == 2)
        self.termination_manager.term_dones = torch.stack([success, done & ~success])
        extras = {"episode_return": success.float(), "episode_length": self.t.float()}
        self.t = torch.where(done, torch.zeros_like(self.t), self.t)
        return {"policy": torch.zeros(self.num_envs, 1)}, torch.zeros(self.num_envs), success, done & ~success, extras


class ZeroPolicy:
    def act_inference(self, obs):
        return torch.zeros(obs["policy"].shape[0], 1)

    def reset(self, dones):
        pass


def test_each_env_contributes_its_first_episodes_only():
    env = TwoSpeedEnv(4)
    runner = SimpleNamespace(env=env, algorithm=SimpleNamespace(policy=ZeroPolicy()), rollout_threads=1)
    result = evaluate(runner, episodes=4)  # type: ignore[arg-type]
    # one episode per env: 1 success (env 0) and 3 time-outs. Counting the first 4 episodes to end
    # would have taken env 0's successes at steps 2, 4, 6, 8 and reported a success rate of 1.
    assert result["episodes"] == 4 and result["ended_by_success"] == 0.25 and result["ended_by_time_out"] == 0.75
    result = evaluate(runner, episodes=6)  # type: ignore[arg-type]  # ⌈6/4⌉ = 2 per env
    assert result["episodes"] == 8 and result["ended_by_success"] == 0.25
