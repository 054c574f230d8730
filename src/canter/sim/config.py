"""Simulator configuration."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from canter.core.validate import Validated, require_at_least, require_choice, require_positive

Backend = Literal["cpu", "warp"]
SensorStage = Literal["lagged", "current"]


@dataclass(kw_only=True)
class SimCfg(Validated):
    """How the physics runs.

    backend: "cpu" steps MuJoCo's C engine in batches on a C++ thread pool (mujoco.batch.Batch);
        "warp" runs MuJoCo Warp on `device` (CUDA, or Warp's CPU device when device is "cpu").
    timestep: physics step in seconds; None keeps the MJCF's <option timestep>.
    num_threads: cpu backend threads; 0 uses every core this process may run on.
    sensor_stage: "lagged" keeps MuJoCo's mj_step semantics: derived fields and MJCF sensors describe
        the state at the start of the last physics substep (free). "current" recomputes the position
        and velocity stages at the new state after each control step, so position/velocity sensors,
        body poses and site positions match qpos/qvel exactly (costs roughly one extra forward pass
        per control step without the constraint solve). Acceleration-stage sensors (touch, force,
        contact) always report the last substep. Both backends implement both choices identically.
    nconmax, njmax: warp backend contact/constraint capacity per world (None: MuJoCo Warp's defaults).
    """

    backend: Backend = "cpu"
    timestep: float | None = None
    num_threads: int = 0
    sensor_stage: SensorStage = "lagged"
    nconmax: int | None = None
    njmax: int | None = None

    config_name = "sim"

    def validate(self) -> None:
        require_choice(self, "backend", "sensor_stage")
        if self.timestep is not None:
            require_positive(self, "timestep")
        require_at_least(self, "num_threads", 0, integer=True)
        for name in ("nconmax", "njmax"):
            if getattr(self, name) is not None:
                require_at_least(self, name, 1, integer=True)
