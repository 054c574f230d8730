"""canter eval's episode accounting: every env contributes its first ⌈episodes / num_envs⌉ episodes,
so episodes that end early (successes) are not counted in place of slow ones (time-outs)."""

from __future__ import annotations

from types import SimpleNamespace

import torch

from canter.cli.play_eval import evaluate
from canter.rl.distributions import categorical_sample
from canter.rl.modules import PolicyStep


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


class Bandit:
    """One-step episodes of a two-armed bandit: the return is 1 when the env takes action 1 (the
    argmax of a row of logits, or of a one-hot sample), else 0."""

    def __init__(self, num_envs: int):
        self.num_envs, self.device = num_envs, torch.device("cpu")

    def reset(self):
        return {"policy": torch.zeros(self.num_envs, 1)}, {}

    def step(self, actions):
        reward = (actions.argmax(dim=1) == 1).float()
        done = torch.ones(self.num_envs, dtype=torch.bool)
        extras = {"episode_return": reward, "episode_length": torch.ones(self.num_envs)}
        return {"policy": torch.zeros(self.num_envs, 1)}, reward, done, ~done, extras


class SeventyThirty:
    """A categorical policy that picks action 0 with probability 0.7 and action 1 with 0.3."""

    logits = torch.tensor([0.7, 0.3]).log()

    def act_inference(self, obs):
        return self.logits.expand(obs["policy"].shape[0], 2)

    def act(self, obs, generator):
        logits = self.act_inference(obs)
        actions = categorical_sample(logits, generator)
        return PolicyStep(actions, torch.zeros(len(actions)), logits, torch.zeros_like(logits))

    def reset(self, dones):
        pass


def test_a_generator_makes_evaluation_sample_the_policy():
    runner = SimpleNamespace(env=Bandit(500), algorithm=SimpleNamespace(policy=SeventyThirty()), rollout_threads=1)
    assert evaluate(runner, episodes=4000)["mean_return"] == 0.0  # type: ignore[arg-type]  # the argmax: always arm 0
    sampled = [evaluate(runner, episodes=4000, generator=torch.Generator().manual_seed(seed))  # type: ignore[arg-type]
               for seed in (0, 0, 1)]
    # arm 1 on 30 % of 4,000 draws: the standard error is sqrt(0.21 / 4000) = 0.0072; 4 of them
    assert abs(sampled[0]["mean_return"] - 0.3) < 0.029
    assert sampled[0] == sampled[1] and sampled[0]["mean_return"] != sampled[2]["mean_return"]


def test_progress_is_told_the_counted_episodes_and_the_steps(monkeypatch):
    from canter.cli import play_eval

    monkeypatch.setattr(play_eval, "PROGRESS_EVERY_S", 0.0)  # every step
    env = TwoSpeedEnv(4)
    runner = SimpleNamespace(env=env, algorithm=SimpleNamespace(policy=ZeroPolicy()), rollout_threads=1)
    told: list[tuple[int, int, int]] = []
    evaluate(runner, episodes=6, progress=lambda *a: told.append(a))  # type: ignore[arg-type]
    # 2 episodes per env: env 0's by step 4 (it keeps running, uncounted), the others' at steps 10 and 20
    counted = [c for c, _, _ in told[:-1]]
    assert [s for _, _, s in told[:-1]] == list(range(1, 21)) and told[-1] == (8, 8, 20)
    assert counted[1] == 1 and counted[3] == 2 and counted[9] == 5 and counted[19] == 8
    assert counted == sorted(counted) and {t for _, t, _ in told} == {8}


def test_a_stopped_evaluation_reports_the_episodes_that_ended_or_nothing():
    env = TwoSpeedEnv(4)
    runner = SimpleNamespace(env=env, algorithm=SimpleNamespace(policy=ZeroPolicy()), rollout_threads=1)
    steps = []

    def stop_after(n):
        steps.clear()
        return lambda: steps.append(1) or len(steps) >= n

    # by step 5 only env 0 has ended an episode (at step 2; its next one at 4 is beyond the 1 per env asked)
    result = evaluate(runner, episodes=4, stop=stop_after(5))  # type: ignore[arg-type]
    assert len(steps) == 5 and result["episodes"] == 1 and result["ended_by_success"] == 1.0
    assert evaluate(runner, episodes=4, stop=stop_after(1)) == {}  # type: ignore[arg-type]  # nothing ended


def test_canter_eval_stopped_by_a_signal_prints_the_partial_figures_and_exits_as_the_signal(tmp_path, capfd, monkeypatch):
    """Ctrl-C (or SIGTERM) during `canter eval` ends it after the step under way: the episodes that ended are
    reported, marked as interrupted with the number asked for, and the command ends as the signal's
    (Interrupted: exit 128 + signum). Stopped before any episode ended, it reports nothing."""
    import json
    import os
    import signal

    import pytest

    from canter.cli import play_eval
    from canter.cli.main import main
    from canter.core.errors import Interrupted

    from .test_train import SMALL

    run = tmp_path / "cartpole"
    assert main(["train", "cartpole", "--run-dir", str(run), *SMALL, "--max-iterations", "1"]) == 0
    load_run = play_eval.load_run

    def signalling_after(steps: int, signum: signal.Signals):
        def load(*args, **kwargs):
            command, train_args, runner = load_run(*args, **kwargs)
            step, taken = runner.env.step, []

            def step_then_signal(actions):
                out = step(actions)
                taken.append(1)
                if len(taken) == steps:
                    os.kill(os.getpid(), signum)
                return out

            runner.env.step = step_then_signal
            return command, train_args, runner
        return load

    capfd.readouterr()
    handlers = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
    monkeypatch.setattr(play_eval, "load_run", signalling_after(60, signal.SIGINT))
    with pytest.raises(Interrupted) as stopped:
        main(["eval", str(run), "--episodes", "400", "--num-envs", "4", "--json"])
    assert stopped.value.signum == signal.SIGINT
    result = json.loads(capfd.readouterr().out)
    # the untrained cart leaves its track within some 20 steps: 60 steps end a few episodes of each env
    assert result["interrupted"] == "SIGINT" and result["episodes_requested"] == 400 and 4 <= result["episodes"] < 400
    monkeypatch.setattr(play_eval, "load_run", signalling_after(60, signal.SIGTERM))
    with pytest.raises(Interrupted) as stopped:
        main(["eval", str(run), "--episodes", "400", "--num-envs", "4"])
    out = " ".join(capfd.readouterr().out.split())
    assert stopped.value.signum == signal.SIGTERM and "interrupted by SIGTERM after" in out and "of 400 episodes" in out
    monkeypatch.setattr(play_eval, "load_run", signalling_after(1, signal.SIGINT))
    with pytest.raises(Interrupted):
        main(["eval", str(run), "--episodes", "400", "--num-envs", "4", "--json"])
    assert capfd.readouterr().out == ""
    assert {signum: signal.getsignal(signum) for signum in handlers} == handlers  # the handlers are given back
