"""Simulator configuration."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from canter.core.errors import ConfigError

Backend = Literal["cpu", "warp"]
SensorStage = Literal["lagged", "current"]


@dataclass(kw_only=True)
class SimCfg:
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

    def __post_init__(self) -> None:
        if self.backend not in ("cpu", "warp"):
            raise ConfigError(f"sim.backend: {self.backend!r} is not one of 'cpu', 'warp'")
        if self.timestep is not None and not self.timestep > 0:
            raise ConfigError(f"sim.timestep: must be > 0, got {self.timestep}")
        if self.num_threads < 0:
            raise ConfigError(f"sim.num_threads: must be >= 0, got {self.num_threads}")
        if self.sensor_stage not in ("lagged", "current"):
            raise ConfigError(f"sim.sensor_stage: {self.sensor_stage!r} is not one of 'lagged', 'current'")
