"""The scene: a simulator plus what tasks read from it by name, as (num_envs, ...) tensors.

Root quantities assume the model's first joint is a free joint (legged robots); robots without one
(cartpole) simply do not use them. Frames: `_w` world, `_b` body (root) frame.
"""

from __future__ import annotations

from collections.abc import Callable

import mujoco
import torch

from canter.core.errors import ConfigError
from canter.core.math import quat_rotate_inverse
from canter.core.selection import as_slice
from canter.sim.backend import Simulator

_GRAVITY_DIR = (0.0, 0.0, -1.0)


class Scene:
    """Named, batched views over a Simulator. Per-step derived values are cached until `invalidate()`."""

    def __init__(self, sim: Simulator):
        self.sim = sim
        self.model = sim.model
        self.device = sim.device
        self.num_envs = sim.num_envs
        model = sim.model
        # hinge and slide joints are the "joints" tasks act on; the free root is handled apart
        kinds = (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE))
        self.joint_ids = [j for j in range(model.njnt) if int(model.jnt_type[j]) in kinds]
        self.has_free_root = model.njnt > 0 and int(model.jnt_type[0]) == int(mujoco.mjtJoint.mjJNT_FREE)
        self._names: dict[str, list[str]] = {
            "joint": [model.joint(j).name for j in self.joint_ids],
            "body": [model.body(i).name for i in range(model.nbody)],
            "geom": [model.geom(i).name for i in range(model.ngeom)],
            "site": [model.site(i).name for i in range(model.nsite)],
            "sensor": [model.sensor(i).name for i in range(model.nsensor)],
            "actuator": [model.actuator(i).name for i in range(model.nu)],
        }
        dtype = sim.dtype
        qpos_adr = torch.tensor([int(model.jnt_qposadr[j]) for j in self.joint_ids], dtype=torch.long)
        dof_adr = torch.tensor([int(model.jnt_dofadr[j]) for j in self.joint_ids], dtype=torch.long)
        self.joint_qpos_adr = qpos_adr.to(self.device)
        self.joint_dof_adr = dof_adr.to(self.device)
        self.default_qpos = sim.default_qpos  # (nq,) the reset configuration (default keyframe or qpos0)
        self.default_joint_pos = self.default_qpos[qpos_adr.to(self.device)]
        self.joint_limits = torch.as_tensor(model.jnt_range[self.joint_ids], dtype=dtype).to(self.device)
        self.joint_limited = torch.as_tensor(model.jnt_limited[self.joint_ids], dtype=torch.bool).to(
            self.device
        )
        # column of the joint arrays driven by each actuator (joint transmissions; -1 otherwise)
        column = {j: c for c, j in enumerate(self.joint_ids)}
        self.actuator_joint_cols = torch.tensor(
            [column.get(int(model.actuator_trnid[a, 0]), -1) for a in range(model.nu)], dtype=torch.long
        ).to(self.device)
        self._actuated_all_in_order = self.actuator_joint_cols.tolist() == list(range(len(self.joint_ids)))
        self.gravity_dir_w = torch.tensor(_GRAVITY_DIR, dtype=dtype, device=self.device).expand(
            self.num_envs, 3
        )
        self._cache: dict[str, torch.Tensor] = {}
        self._model_fields: dict[str, torch.Tensor] = {}
        # joints stored contiguously (the usual case) are read as zero-copy slices
        self._qpos_slice = as_slice(qpos_adr.tolist())
        self._dof_slice = as_slice(dof_adr.tolist())

    def names(self, kind: str) -> list[str]:
        return self._names[kind]

    def sensor_adr(self, name: str) -> slice:
        """The slice of sensordata holding sensor `name`."""
        if name not in self._names["sensor"]:
            raise ConfigError(f"model has no sensor {name!r} (have: {', '.join(self._names['sensor'])})")
        sid = self._names["sensor"].index(name)
        start = int(self.model.sensor_adr[sid])
        return slice(start, start + int(self.model.sensor_dim[sid]))

    def model_field(self, name: str) -> torch.Tensor:
        """The compiled model's nominal values of MjModel field `name` (e.g. "body_mass"), as one
        tensor on the device, built at the first call and shared afterwards (do not write to it).
        Float fields come in the simulator's dtype. Per-env values live in `sim.expand(name)`."""
        value = self._model_fields.get(name)
        if value is None:
            array = getattr(self.model, name, None)
            if array is None:
                raise ConfigError(f"MjModel has no field {name!r}")
            dtype = self.sim.dtype if array.dtype.kind == "f" else None
            value = torch.as_tensor(array, dtype=dtype, device=self.device).clone()
            self._model_fields[name] = value
        return value

    def invalidate(self) -> None:
        """Drop per-step cached values; the env calls this after every physics step and reset."""
        self._cache.clear()

    def cached(self, key: str, compute: Callable[[], torch.Tensor]) -> torch.Tensor:
        """`compute()`, evaluated once per step: terms share derived quantities through this."""
        return self._cached(key, compute)

    def cached_while(self, key: str, source: torch.Tensor, compute: Callable[[], torch.Tensor]) -> torch.Tensor:
        """`compute()` of a value that depends on `source` (and on nothing else that changes within a
        step): cached like `cached()`, and computed again once `source` has been written in place
        (torch's version counter), e.g. a command resampled or an episode clock reset between the
        rewards and the observations of one step."""
        return self._cached(f"{key}@{source._version}", compute)

    def _cached(self, key: str, compute: Callable[[], torch.Tensor]) -> torch.Tensor:
        value = self._cache.get(key)
        if value is None:
            value = compute()
            self._cache[key] = value
        return value

    # --- joints -------------------------------------------------------------------------------
    @property
    def joint_pos(self) -> torch.Tensor:
        """(num_envs, num_joints) positions of every hinge/slide joint, rad or m."""
        if self._qpos_slice is not None:
            return self.sim.qpos[:, self._qpos_slice]
        return self._cached("joint_pos", lambda: self.sim.qpos[:, self.joint_qpos_adr])

    @property
    def joint_vel(self) -> torch.Tensor:
        """(num_envs, num_joints) velocities, rad/s or m/s."""
        if self._dof_slice is not None:
            return self.sim.qvel[:, self._dof_slice]
        return self._cached("joint_vel", lambda: self.sim.qvel[:, self.joint_dof_adr])

    @property
    def actuated_joint_vel(self) -> torch.Tensor:
        """(num_envs, nu) velocity of the joint each actuator drives (0 where it drives none)."""
        if self._actuated_all_in_order:
            return self.joint_vel
        return self._cached(
            "actuated_joint_vel",
            lambda: torch.where(
                self.actuator_joint_cols >= 0,
                self.joint_vel.index_select(1, self.actuator_joint_cols.clamp_min(0)),
                torch.zeros((), dtype=self.sim.dtype, device=self.device),
            ),
        )

    # --- free root ----------------------------------------------------------------------------
    def _require_root(self) -> None:
        if not self.has_free_root:
            raise ConfigError("this term needs a floating base: the model's first joint must be a free joint")

    @property
    def root_pos_w(self) -> torch.Tensor:
        """(num_envs, 3) root position in the world, m."""
        self._require_root()
        return self.sim.qpos[:, 0:3]

    @property
    def root_quat_w(self) -> torch.Tensor:
        """(num_envs, 4) root orientation (w, x, y, z)."""
        self._require_root()
        return self.sim.qpos[:, 3:7]

    @property
    def root_lin_vel_w(self) -> torch.Tensor:
        """(num_envs, 3) root linear velocity in the world frame, m/s (free-joint qvel[0:3])."""
        self._require_root()
        return self.sim.qvel[:, 0:3]

    @property
    def root_ang_vel_b(self) -> torch.Tensor:
        """(num_envs, 3) root angular velocity in the body frame, rad/s (free-joint qvel[3:6])."""
        self._require_root()
        return self.sim.qvel[:, 3:6]

    @property
    def root_lin_vel_b(self) -> torch.Tensor:
        """(num_envs, 3) root linear velocity in the body frame, m/s."""
        return self._root_frame_b()[:, 0]

    @property
    def projected_gravity_b(self) -> torch.Tensor:
        """(num_envs, 3) unit gravity direction in the body frame ((0, 0, -1) when upright)."""
        return self._root_frame_b()[:, 1]

    def _root_frame_b(self) -> torch.Tensor:
        """(num_envs, 2, 3): the root's linear velocity and the gravity direction in the body frame,
        rotated together (one rotation instead of two; each row is computed exactly as alone)."""
        return self._cached(
            "root_frame_b",
            lambda: quat_rotate_inverse(
                self.root_quat_w[:, None, :], torch.stack((self.root_lin_vel_w, self.gravity_dir_w), dim=1)
            ),
        )
