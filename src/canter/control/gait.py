"""Gait scheduler: one gait phase per env, advanced by a (policy-controlled) phase speed; each leg's
phase is the gait phase plus its offset, and a leg is in stance for the first `duty_factor` of its
cycle, in swing for the rest.

    φ ← (φ + dt · f · speed) mod 1,   φ_i = (φ + offset_i) mod 1,   stance_i = φ_i < duty
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from canter.core import selection
from canter.core.validate import Validated, fail, require_finite, require_pair, require_positive

TROT = (0.0, 0.5, 0.5, 0.0)  # FR, FL, RR, RL: diagonal pairs half a cycle apart
PACE = (0.0, 0.5, 0.0, 0.5)
BOUND = (0.0, 0.0, 0.5, 0.5)


@dataclass(kw_only=True)
class GaitCfg(Validated):
    """frequency: gait cycles per second at phase speed 1, Hz. duty_factor: stance share of a cycle.
    offsets: per-leg phase offsets in cycles (default: trot). speed_range: the phase speed is
    clamped to it."""

    frequency: float = 2.5
    duty_factor: float = 0.5
    offsets: tuple[float, ...] = TROT
    speed_range: tuple[float, float] = (0.5, 1.6)

    config_name = "gait"

    def validate(self) -> None:
        require_positive(self, "frequency")
        require_finite(self, "duty_factor")
        if not 0.0 < self.duty_factor < 1.0:
            raise fail("duty_factor", f"must be in (0, 1), got {self.duty_factor}")
        require_pair(self, "speed_range")
        if not self.speed_range[0] > 0.0:
            raise fail("speed_range", f"need 0 < low <= high, got {self.speed_range}")


class GaitScheduler:
    """Batched gait phases of `num_envs` envs.

    phase: (num_envs,) gait phase in [0, 1). speed: (num_envs,) the phase speed of the last advance.
    """

    def __init__(self, cfg: GaitCfg, num_envs: int, device: torch.device, dtype: torch.dtype):
        self.cfg = cfg
        self.offsets = torch.tensor(cfg.offsets, dtype=dtype, device=device)
        self.phase = torch.zeros(num_envs, dtype=dtype, device=device)
        self.speed = torch.ones(num_envs, dtype=dtype, device=device)

    def advance(self, dt: float, speed: torch.Tensor | float = 1.0) -> None:
        """φ ← (φ + dt f speed) mod 1; speed (num_envs,) or scalar, clamped to cfg.speed_range."""
        speed = torch.as_tensor(speed, dtype=self.phase.dtype, device=self.phase.device)
        # in place: carried between steps (a captured env step reads them there)
        self.speed.copy_(speed.clamp(*self.cfg.speed_range).expand_as(self.phase))
        self.phase.copy_(torch.remainder(self.phase + dt * self.cfg.frequency * self.speed, 1.0))

    @property
    def leg_phase(self) -> torch.Tensor:
        """(num_envs, legs) φ_i = (φ + offset_i) mod 1."""
        return torch.remainder(self.phase[:, None] + self.offsets, 1.0)

    @property
    def stance(self) -> torch.Tensor:
        """(num_envs, legs) bool: φ_i < duty_factor."""
        return self.leg_phase < self.cfg.duty_factor

    @property
    def swing_progress(self) -> torch.Tensor:
        """(num_envs, legs) s in [0, 1]: (φ_i − duty) / (1 − duty) in swing, 0 in stance."""
        duty = self.cfg.duty_factor
        return ((self.leg_phase - duty) / (1.0 - duty)).clamp(0.0, 1.0)

    @property
    def stance_progress(self) -> torch.Tensor:
        """(num_envs, legs) in [0, 1]: φ_i / duty in stance, 1 in swing."""
        return (self.leg_phase / self.cfg.duty_factor).clamp(0.0, 1.0)

    @property
    def cycle_time(self) -> torch.Tensor:
        """(num_envs,) seconds per gait cycle at the current speed."""
        return 1.0 / (self.cfg.frequency * self.speed)

    def swing_duration(self) -> torch.Tensor:
        """(num_envs,) seconds a swing lasts at the current speed."""
        return (1.0 - self.cfg.duty_factor) * self.cycle_time

    def stance_duration(self) -> torch.Tensor:
        """(num_envs,) seconds a stance lasts at the current speed."""
        return self.cfg.duty_factor * self.cycle_time

    def reset(self, env_ids: torch.Tensor, phase: float = 0.0) -> None:
        selection.fill(self.phase, env_ids, phase)
        selection.fill(self.speed, env_ids, 1.0)

    def state_dict(self) -> dict[str, torch.Tensor]:
        return {"phase": self.phase.clone(), "speed": self.speed.clone()}

    def load_state_dict(self, state: dict[str, torch.Tensor]) -> None:
        self.phase.copy_(state["phase"])
        self.speed.copy_(state["speed"])
