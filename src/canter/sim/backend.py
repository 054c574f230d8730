"""The simulator interface both backends implement.

Every tensor is a live, zero-copy view shaped (num_envs, ...) on `device`: writing `ctrl` or `qpos`
changes what the next step simulates, and `step()` updates the views in place. State views (qpos,
qvel, act, ctrl, xfrc_applied) are always current. Derived views (sensordata and fields from
`field()`) follow `SimCfg.sensor_stage` (see canter.sim.config.SimCfg).
"""

from __future__ import annotations

import contextlib
from abc import ABC, abstractmethod
from collections.abc import Iterator

import mujoco
import torch

from canter.core import selection
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

    # the selections of the set_const() calls held back inside one_set_const(); None outside it
    _set_const_pending: list[torch.Tensor | None] | None = None

    def set_const(self, env_ids: torch.Tensor | None = None) -> None:
        """Recompute model constants derived from expanded fields (mj_setConst) per env. Inside a
        `one_set_const()` block the call only notes its envs (see there)."""
        if self._set_const_pending is not None:
            self._set_const_pending.append(env_ids)
            return
        self._set_const(env_ids)

    @abstractmethod
    def _set_const(self, env_ids: torch.Tensor | None) -> None:
        """The backend's mj_setConst of the selected envs (all if None)."""

    @contextlib.contextmanager
    def one_set_const(self) -> Iterator[None]:
        """Hold back the set_const() calls made in the block and make one call at its end, for the
        union of their envs. The constants depend only on the model fields, so one call after the
        last write gives every env what a call after each write would (bit for bit), at the cost of
        one: the event manager runs its domain-randomization terms in such a block (three terms
        that each change masses, inertias or gears cost one mj_setConst per resetting env, not
        three). Code in the block must not read the derived constants it invalidates. Nested
        blocks join the outermost one; after an exception nothing is recomputed."""
        if self._set_const_pending is not None:
            yield
            return
        pending: list[torch.Tensor | None] = []
        self._set_const_pending = pending
        try:
            yield
        finally:
            self._set_const_pending = None
        if pending:
            self._set_const(_union(pending, self.num_envs))

    @abstractmethod
    def get_state(self) -> dict[str, torch.Tensor]:
        """A copy of everything the next steps depend on: the full integration state of every env
        (incl. time, controls, applied forces, warm starts) and the per-env model fields."""

    @abstractmethod
    def set_state(self, state: dict[str, torch.Tensor]) -> None:
        """Restore a `get_state()` copy; stepping then continues bitwise as it would have."""


def _union(selections: list[torch.Tensor | None], num_envs: int) -> torch.Tensor | None:
    """The envs named by any of `selections` (None: all envs; else indices or (num_envs,) bool masks):
    None if any is None, the selection itself when every call named the same tensor, a mask when
    any is a mask (no host read), else the sorted unique indices."""
    if any(sel is None for sel in selections):
        return None
    tensors = [sel for sel in selections if sel is not None]
    first = tensors[0]
    if all(sel is first for sel in tensors):
        return first
    if any(selection.is_mask(sel) for sel in tensors):
        mask = torch.zeros(num_envs, dtype=torch.bool, device=first.device)
        for sel in tensors:
            if selection.is_mask(sel):
                mask |= sel
            else:
                mask[sel] = True
        return mask
    return torch.unique(torch.cat(tensors))


def make_simulator(model: mujoco.MjModel, num_envs: int, cfg: SimCfg, device: torch.device) -> Simulator:
    """Build the backend named by cfg.backend. From here on MuJoCo's warnings are counted, not printed
    (canter.sim.mjwarnings)."""
    mjwarnings.collect()
    if cfg.backend == "cpu":
        from canter.sim.cpu import CpuSimulator

        return CpuSimulator(model, num_envs, cfg, device)
    from canter.sim.warp import WarpSimulator

    return WarpSimulator(model, num_envs, cfg, device)
