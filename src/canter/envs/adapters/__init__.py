"""Adapters that plug a Canter VecEnv into the RL libraries people already run.

GymnasiumVecEnvWrapper  gymnasium.vector.VectorEnv, same-step autoreset, numpy or torch   (gymnasium.py)
RslRlVecEnvWrapper      rsl_rl.env.VecEnv, TensorDict observations, zero-copy             (rsl_rl.py)
Sb3VecEnvWrapper        stable_baselines3 VecEnv, numpy                                    (sb3.py)

Each library is optional: a wrapper's module imports it when the wrapper is first used (importing
this package imports none of them), and raises a CanterError naming the pip package if it is missing.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from canter.envs.adapters.gymnasium import GymnasiumVecEnvWrapper
    from canter.envs.adapters.rsl_rl import RslRlVecEnvWrapper
    from canter.envs.adapters.sb3 import Sb3VecEnvWrapper

_MODULES = {
    "GymnasiumVecEnvWrapper": "canter.envs.adapters.gymnasium",
    "RslRlVecEnvWrapper": "canter.envs.adapters.rsl_rl",
    "Sb3VecEnvWrapper": "canter.envs.adapters.sb3",
}

__all__ = ["GymnasiumVecEnvWrapper", "RslRlVecEnvWrapper", "Sb3VecEnvWrapper"]


def __getattr__(name: str) -> Any:
    if name not in _MODULES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_MODULES[name]), name)
