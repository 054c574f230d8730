"""The simulator interface both backends implement.

Every tensor is a live, zero-copy view shaped (num_envs, ...) on `device`: writing `ctrl` or `qpos`
changes what the next step simulates, and `step()` updates the views in place. State views (qpos,
qvel, act, ctrl, xfrc_applied) are always current. Derived views (sensordata and fields from
`field()`) follow `SimCfg.sensor_stage` (see canter.sim.config.SimCfg).
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import mujoco
import torch

from canter.sim import mjwarnings
from canter.sim.config import SimCfg


class Simulator(ABC):
    """A batch of `num_envs` copies of one MuJoCo model on one device."""

    model: mujoco.MjModel
    cfg: SimCfg
    num_envs: int
    device: torch.device
    dtype: torch.dtype
    qpos: torch.Tensor  # (num_envs, nq)
    qvel: torch.Tensor  # (num_envs, nv)
    act: torch.Tensor  # (num_envs, na)
    ctrl: torch.Tensor  # (num_envs, nu)
    xfrc_applied: torch.Tensor  # (num_envs, nbody, 6), world-frame force and torque at body CoM
    sensordata: torch.Tensor  # (num_envs, nsensordata)
    nonfinite: torch.Tensor  # (num_envs,) bool: envs whose last step produced a non-finite state
    nonfinite_total: torch.Tensor  # () int64: envs caught by the NaN guard since construction

    default_key: int | None = None  # keyframe resets start from (None: the model defaults)
    # whether resets are best named by a (num_envs,) bool mask on the device (no host read; warp) rather
    # than by env indices on the host (cpu: MuJoCo C resets named rows). Both kinds are accepted.
    resets_on_device: bool = False

    @property
    def timestep(self) -> float:
        return float(self.model.opt.timestep)

    @property
    def any_nonfinite(self) -> bool | None:
        """Whether the last step caught any env, when the backend knows it on the host (the cpu
        backend answers from a flag); None when only the device knows (warp: read `nonfinite`)."""
        return bool(self.nonfinite.any())

    @property
    def default_qpos(self) -> torch.Tensor:
        """(nq,) the configuration resets start from: the default keyframe's qpos, else qpos0.
        (qpos0 itself cannot be moved: MuJoCo measures hinge angles relative to it.)"""
        source = self.model.qpos0 if self.default_key is None else self.model.key_qpos[self.default_key]
        return torch.as_tensor(source.copy(), dtype=self.dtype, device=self.device)

    @abstractmethod
    def set_default_keyframe(self, key: int) -> None:
        """Make resets start from keyframe `key` (its qpos, qvel, act and ctrl) instead of qpos0."""

    @abstractmethod
    def step(self, nstep: int = 1) -> None:
        """Advance every env by `nstep` physics steps with the current controls.

        Afterwards `nonfinite` marks envs whose state became NaN/Inf or that MuJoCo had to reset for
        an unstable state; their state is restored to the model defaults so the batch keeps running.
        """

    @abstractmethod
    def reset(self, env_ids: torch.Tensor | None = None) -> None:
        """Reset the given envs (indices or a (num_envs,) bool mask; all if None) to the model defaults: qpos0, zero velocities and
        activations, zero controls and applied forces. Other envs' rows are untouched. Call
        `forward(env_ids)` after writing custom initial states."""

    @abstractmethod
    def forward(self, env_ids: torch.Tensor | None = None) -> None:
        """Recompute derived quantities (positions, velocities, sensors) of the given envs at their
        current state, e.g. after writing qpos/qvel in a reset."""

    @abstractmethod
    def field(self, name: str) -> torch.Tensor:
        """A live (num_envs, ...) view of an MjData field (e.g. 'xpos', 'xquat', 'site_xpos',
        'cfrc_ext', 'subtree_com'). Derived fields follow the sensor stage.

        On the cpu backend a derived field is filled by every step or forward from the first one
        after it was asked for (MuJoCo's batch copies out the fields registered with it and keeps
        no MjData between calls): ask for it when building the term, before reading it."""

    @abstractmethod
    def expand(self, name: str) -> torch.Tensor:
        """Give the MjModel field `name` per-env values and return the live (num_envs, ...) view,
        for domain randomization (e.g. 'geom_friction', 'body_mass', 'actuator_gainprm',
        'opt.gravity'). Call `set_const()` after writing fields MuJoCo derives constants from."""

    @abstractmethod
    def is_expanded(self, name: str) -> bool:
        """Whether the MjModel field `name` has per-env values (expand() or set_const() made them)."""

    @abstractmethod
    def set_const(self, env_ids: torch.Tensor | None = None) -> None:
        """Recompute model constants derived from expanded fields (mj_setConst) per env."""

    @abstractmethod
    def get_state(self) -> dict[str, torch.Tensor]:
        """A copy of everything the next steps depend on: the full integration state of every env
        (incl. time, controls, applied forces, warm starts) and the per-env model fields."""

    @abstractmethod
    def set_state(self, state: dict[str, torch.Tensor]) -> None:
        """Restore a `get_state()` copy; stepping then continues bitwise as it would have."""


def make_simulator(model: mujoco.MjModel, num_envs: int, cfg: SimCfg, device: torch.device) -> Simulator:
    """Build the backend named by cfg.backend. From here on MuJoCo's warnings are counted, not printed
    (canter.sim.mjwarnings)."""
    mjwarnings.collect()
    if cfg.backend == "cpu":
        from canter.sim.cpu import CpuSimulator

        return CpuSimulator(model, num_envs, cfg, device)
    from canter.sim.warp import WarpSimulator

    return WarpSimulator(model, num_envs, cfg, device)
