"""The small protocol the learning algorithms see. Nothing in canter.rl imports more of the env.

Observations come as named groups, each a (num_envs, dim) float32 tensor on `device`
(e.g. "policy" for the actor, "critic" for a privileged critic), or an image group (num_envs, C, H, W)
in the dtype an env may state in an optional `observation_dtypes` mapping (uint8 RGB). Rewards are (num_envs,) float32;
`terminated` (a terminal state: no bootstrap) and `truncated` (time-out: bootstrap) are (num_envs,)
bool. Envs that end are reset inside `step()`, and the returned observation of such an env is the
first one of its new episode.

extras:
  "log": dict[str, float tensor ()] - scalars to log once per iteration (episode reward terms, ...).
  "episode_return": (num_envs,) float32, valid where an episode ended this step (terminated|truncated).
  "episode_length": (num_envs,) float32, same mask.
  "episode_end" (optional): (num_envs,) bool, the episodes that ended for the statistics where an env
    ends them apart from the learner's terminals (Atari's episodic life); default terminated|truncated.
  "nonfinite_resets" (optional): () int64, envs reset this step because the physics blew up.
An env may also offer `take_sim_warnings() -> dict[str, int]` (the simulator's warnings since the
last call, message -> count); the runner reports them once per iteration.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import torch

Observations = dict[str, torch.Tensor]


@runtime_checkable
class VecEnv(Protocol):
    num_envs: int
    num_actions: int
    device: torch.device
    step_dt: float  # seconds of simulated time per env step
    max_episode_length: int  # env steps before a time-out

    @property
    def observation_shapes(self) -> dict[str, tuple[int, ...]]: ...

    def reset(self) -> tuple[Observations, dict[str, Any]]: ...

    def step(
        self, actions: torch.Tensor
    ) -> tuple[Observations, torch.Tensor, torch.Tensor, torch.Tensor, dict[str, Any]]: ...

    def get_observations(self) -> Observations: ...

    def state_dict(self) -> dict[str, Any]:
        """Everything needed to continue bitwise-identically: sim state, RNG states, buffers."""
        ...

    def load_state_dict(self, state: dict[str, Any]) -> None: ...

    def close(self) -> None: ...
