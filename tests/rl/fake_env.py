"""A tiny VecEnv in pure torch for the algorithm tests, and a runner-like loop driving it."""

from __future__ import annotations

from typing import Any

import torch

from canter.core.rng import make_generator, uniform
from canter.rl.algorithm import OnPolicyAlgorithm


class TargetEnv:
    """Each env shows a target x* ~ U(-1, 1); the action a earns r = -(a - x*)².

    Observation groups: "policy" = (x*, t/T), "critic" = (x*, t/T, x*²) with t the step in the episode
    and T = max_episode_length. An episode times out after T steps and terminates early when
    |a - x*| > terminate_distance. Initial episode lengths are staggered so envs end at different steps.
    Envs that end are reset inside step() (new target, t = 0), as the VecEnv protocol says.
    """

    def __init__(
        self,
        num_envs: int = 16,
        *,
        max_episode_length: int = 5,
        terminate_distance: float = 2.5,
        with_critic_group: bool = True,
        seed: int = 0,
        device: str = "cpu",
    ) -> None:
        self.num_envs = num_envs
        self.num_actions = 1
        self.device = torch.device(device)
        self.step_dt = 0.02
        self.max_episode_length = max_episode_length
        self.terminate_distance = terminate_distance
        self.with_critic_group = with_critic_group
        self.generator = make_generator(seed, self.device)
        self.target = self._sample_targets()
        self.episode_length = torch.randint(
            0, max_episode_length, (num_envs,), generator=self.generator, device=self.device
        )

    @property
    def observation_shapes(self) -> dict[str, tuple[int, ...]]:
        shapes = {"policy": (2,)}
        if self.with_critic_group:
            shapes["critic"] = (3,)
        return shapes

    def _sample_targets(self) -> torch.Tensor:
        return uniform(-1.0, 1.0, (self.num_envs,), self.generator, self.device)

    def get_observations(self) -> dict[str, torch.Tensor]:
        progress = self.episode_length.float() / self.max_episode_length
        obs = {"policy": torch.stack([self.target, progress], dim=-1)}
        if self.with_critic_group:
            obs["critic"] = torch.stack([self.target, progress, self.target.square()], dim=-1)
        return obs

    def reset(self) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
        self.target = self._sample_targets()
        self.episode_length.zero_()
        return self.get_observations(), {}

    def step(self, actions: torch.Tensor):
        error = actions[:, 0] - self.target
        rewards = -error.square()
        self.episode_length += 1
        terminated = error.abs() > self.terminate_distance
        truncated = (self.episode_length >= self.max_episode_length) & ~terminated
        done = terminated | truncated
        self.target = torch.where(done, self._sample_targets(), self.target)
        self.episode_length = torch.where(done, torch.zeros_like(self.episode_length), self.episode_length)
        return self.get_observations(), rewards, terminated, truncated, {"log": {}}

    def state_dict(self) -> dict[str, Any]:
        return {
            "generator": self.generator.get_state(),
            "target": self.target.clone(),
            "episode_length": self.episode_length.clone(),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.generator.set_state(state["generator"])
        self.target = state["target"].clone()
        self.episode_length = state["episode_length"].clone()

    def close(self) -> None:
        pass


def collect_rollout(algorithm: OnPolicyAlgorithm, env: TargetEnv, obs: dict[str, torch.Tensor]):
    """One rollout of cfg.num_steps_per_env steps (what the runner does); returns the last obs."""
    for _ in range(algorithm.cfg.num_steps_per_env):
        actions = algorithm.act(obs)
        obs, rewards, terminated, truncated, extras = env.step(actions)
        algorithm.process_env_step(rewards, terminated, truncated, extras)
    return obs


def train(algorithm: OnPolicyAlgorithm, env: TargetEnv, num_iterations: int) -> list[dict[str, torch.Tensor]]:
    """num_iterations of rollout, returns, update, starting from env.get_observations()."""
    algorithm.train_mode()
    obs = env.get_observations()
    stats = []
    for _ in range(num_iterations):
        obs = collect_rollout(algorithm, env, obs)
        algorithm.compute_returns(obs)
        stats.append(algorithm.update())
    return stats


def deterministic_error(algorithm: OnPolicyAlgorithm, num_targets: int = 101) -> float:
    """Mean of (μ(s) - x*)² over evenly spaced targets (mid-episode progress), in eval mode."""
    target = torch.linspace(-1.0, 1.0, num_targets, device=algorithm.device)
    progress = torch.full_like(target, 0.4)
    obs = {
        "policy": torch.stack([target, progress], dim=-1),
        "critic": torch.stack([target, progress, target.square()], dim=-1),
    }
    algorithm.eval_mode()
    with torch.no_grad():
        if algorithm.policy.is_recurrent:
            algorithm.policy.reset(None)
        mean = algorithm.policy.act_inference(obs)
    algorithm.train_mode()
    return float((mean[:, 0] - target).square().mean())


class PickTheLit:
    """Each env shows a one-hot cue over 4 choices; picking the cued choice (argmax of the action row)
    earns 1, any other 0; one-step episodes. Discrete actions."""

    discrete_actions = True

    def __init__(self, num_envs: int = 64, seed: int = 0):
        self.num_envs, self.num_actions, self.device = num_envs, 4, torch.device("cpu")
        self.step_dt, self.max_episode_length = 0.1, 1
        self.generator = make_generator(seed, "cpu")
        self.cue = self._draw()

    @property
    def observation_shapes(self) -> dict[str, tuple[int, ...]]:
        return {"policy": (4,)}

    def _draw(self) -> torch.Tensor:
        return torch.randint(0, 4, (self.num_envs,), generator=self.generator)

    def get_observations(self) -> dict[str, torch.Tensor]:
        return {"policy": torch.nn.functional.one_hot(self.cue, 4).float()}

    def reset(self) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
        return self.get_observations(), {}

    def step(self, actions: torch.Tensor):
        reward = (actions.argmax(dim=1) == self.cue).float()
        self.cue = self._draw()
        done = torch.ones(self.num_envs, dtype=torch.bool)
        extras = {"episode_return": reward, "episode_length": torch.ones(self.num_envs)}
        return self.get_observations(), reward, done, torch.zeros_like(done), extras


class SaturatedTarget:
    """One-step episodes whose best action lies at the edge of the actuator's range: the env clamps the
    action a to [-1, 1] and pays r = -(clamp(a) - 1)², so every a >= 1 is equally best. A policy
    gradient then pushes a Gaussian mean up without end (samples below 1 lose, those above never do),
    the drift that AlgoCfg.bounds_loss_coef stops. Observation: a constant 1. Continuous actions."""

    def __init__(self, num_envs: int = 64):
        self.num_envs, self.num_actions, self.device = num_envs, 1, torch.device("cpu")
        self.step_dt, self.max_episode_length = 0.1, 1

    @property
    def observation_shapes(self) -> dict[str, tuple[int, ...]]:
        return {"policy": (1,)}

    def get_observations(self) -> dict[str, torch.Tensor]:
        return {"policy": torch.ones(self.num_envs, 1)}

    def reset(self) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
        return self.get_observations(), {}

    def step(self, actions: torch.Tensor):
        reward = -(actions[:, 0].clamp(-1.0, 1.0) - 1.0).square()
        done = torch.ones(self.num_envs, dtype=torch.bool)
        extras = {"episode_return": reward, "episode_length": torch.ones(self.num_envs), "log": {}}
        return self.get_observations(), reward, done, torch.zeros_like(done), extras
