"""The cpu backend: MuJoCo's C engine, all envs stepped per call on a C++ thread pool.

Built on mujoco.batch.Batch. Its state rows, bound outputs and expanded model fields are numpy arrays
that torch views without copying (torch.from_numpy), so the env reads and writes MuJoCo's own memory.
"""

from __future__ import annotations

import warnings

import mujoco
import numpy as np
import torch
from mujoco.batch import Batch, SimulationError

from canter.core import selection
from canter.core.device import available_cores
from canter.core.errors import ConfigError
from canter.core.memory import check_memory
from canter.sim.backend import Simulator
from canter.sim.config import SimCfg

# the env's host memory per env, measured in multiples of MuJoCo's integration state plus warning
# counters (cartpole 2.1x, ant 2.4x, dog 2.8x: bound outputs, scene caches, manager buffers)
ENV_BYTES_PER_STATE_BYTE = 3

# mjWARN_BADQPOS, mjWARN_BADQVEL, mjWARN_BADQACC: MuJoCo reset the simulation for an unstable state
_UNSTABLE_WARNINGS = slice(int(mujoco.mjtWarning.mjWARN_BADQPOS), int(mujoco.mjtWarning.mjWARN_BADQACC) + 1)


def _view(array: np.ndarray) -> torch.Tensor:
    """Zero-copy torch view of a numpy array (also of Batch's read-only output arrays)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # torch warns about read-only numpy arrays
        return torch.from_numpy(array)


def bytes_per_env(model: mujoco.MjModel) -> int:
    """Bytes the batch keeps for one env: its integration state (float64) and warning counters."""
    state = mujoco.mj_stateSize(model, int(mujoco.mjtState.mjSTATE_INTEGRATION)) * 8
    return state + int(mujoco.mjtWarning.mjNWARNING) * 2 * 4


class CpuSimulator(Simulator):
    """mujoco.batch.Batch behind the Simulator interface; tensors are float64 on the CPU."""

    def __init__(self, model: mujoco.MjModel, num_envs: int, cfg: SimCfg, device: torch.device):
        if device.type != "cpu":
            raise ConfigError(
                f"sim.backend: 'cpu' keeps the simulation in host memory; device {device} needs backend 'warp'"
            )
        if num_envs < 1:
            raise ConfigError(f"num_envs: must be >= 1, got {num_envs}")
        per_env = ENV_BYTES_PER_STATE_BYTE * bytes_per_env(model)
        check_memory("num_envs", num_envs * per_env, device, f"{num_envs:,} envs x ~{per_env:,} bytes")
        self.model = model
        self.cfg = cfg
        self.num_envs = num_envs
        self.device = device
        self.dtype = torch.float64
        self.num_threads = cfg.num_threads or available_cores()
        self.batch = Batch(model, num_envs, nthread=self.num_threads, persistent=False)
        self._fields: dict[str, torch.Tensor] = {}
        self._stage = int(
            mujoco.mjtStage.mjSTAGE_VEL if cfg.sensor_stage == "current" else mujoco.mjtStage.mjSTAGE_NONE
        )
        self.qpos = _view(self.batch.bind("qpos"))
        self.qvel = _view(self.batch.bind("qvel"))
        self.act = _view(self.batch.bind("act"))
        self.ctrl = _view(self.batch.bind("ctrl"))
        self.xfrc_applied = _view(self.batch.bind("xfrc_applied"))
        self.sensordata = _view(self.batch.bind("sensordata"))
        # per env, how often MuJoCo reset it for an unstable state: zeroed after every catch, because
        # MuJoCo warns (and counts past 1) only while the count is 0 (numpy and torch views)
        self._warning_numbers = self.batch.warning[:, _UNSTABLE_WARNINGS, 1]
        self._warning_count = _view(self._warning_numbers)
        self._warning_numbers[...] = 0
        self._any_nonfinite = False
        self._state_np = self.batch.state
        self._expanded: dict[str, torch.Tensor] = {}  # views of expanded fields (Batch keeps their arrays)
        self._state = _view(self._state_np)
        # the model-default integration state (qpos0, zero velocities, time 0, ...), written into
        # the rows of resetting envs: a row copy instead of a call into the batch
        self.batch.reset(ids=np.array([0]), stage=int(mujoco.mjtStage.mjSTAGE_NONE))
        self._default_row = self._state[0].clone()
        self.nonfinite = torch.zeros(num_envs, dtype=torch.bool)
        self.nonfinite_total = torch.zeros((), dtype=torch.int64)

    def step(self, nstep: int = 1) -> None:
        failed: np.ndarray | None = None
        try:
            self.batch.step(nstep=nstep, stage=self._stage)
        except SimulationError as err:  # those sims kept their pre-call state; treat them as broken
            failed = np.asarray(err.ids)
        # fast path: two scalar reductions (NaN and Inf survive a sum; MuJoCo counts the unstable
        # states it reset in its warnings); the per-env check runs only when one of them fires
        if failed is None and not self._warning_numbers.any() and np.isfinite(self._state_np.sum()):
            if self._any_nonfinite:
                self.nonfinite = torch.zeros(self.num_envs, dtype=torch.bool)
                self._any_nonfinite = False
            return
        bad = ~torch.isfinite(self._state.sum(dim=1)) | (self._warning_count.sum(dim=1) > 0)
        self._warning_numbers[...] = 0
        if failed is not None:
            bad[torch.from_numpy(failed).long()] = True
        self.nonfinite = bad
        self._any_nonfinite = bool(bad.any())
        if self._any_nonfinite:
            ids = bad.nonzero().squeeze(1)
            self.nonfinite_total += ids.numel()
            self.reset(ids)
            self.forward(ids)

    @property
    def any_nonfinite(self) -> bool:
        return self._any_nonfinite

    def set_default_keyframe(self, key: int) -> None:
        self.default_key = int(key)
        self.batch.reset(ids=np.array([0]), keyframe=np.array([key]), stage=int(mujoco.mjtStage.mjSTAGE_NONE))
        self._default_row = self._state[0].clone()

    def reset(self, env_ids: torch.Tensor | None = None) -> None:
        env_ids = None if env_ids is None else selection.to_ids(env_ids)
        if self.batch.expanded("qpos0") is not None:  # per-env defaults: let MuJoCo write them
            ids = None if env_ids is None else env_ids.numpy()
            key = -1 if self.default_key is None else self.default_key
            self.batch.reset(ids=ids, keyframe=key, stage=int(mujoco.mjtStage.mjSTAGE_NONE))
        elif env_ids is None:
            self._state.copy_(self._default_row.expand_as(self._state))
        else:
            self._state[env_ids] = self._default_row

    def forward(self, env_ids: torch.Tensor | None = None) -> None:
        ids = None if env_ids is None else selection.to_ids(env_ids).numpy()
        self.batch.forward(ids=ids, stage=int(mujoco.mjtStage.mjSTAGE_ACC))

    def field(self, name: str) -> torch.Tensor:
        view = self._fields.get(name)
        if view is not None:
            return view
        try:
            view = _view(self.batch.bind(name))
        except (ValueError, AttributeError, KeyError) as err:
            raise ConfigError(f"sim.field: MjData has no bindable field {name!r}") from err
        self._fields[name] = view
        return view

    def expand(self, name: str) -> torch.Tensor:
        view = self._expanded.get(name)
        if view is None:
            try:
                view = _view(self.batch.expand(name))
            except (ValueError, AttributeError, KeyError) as err:
                raise ConfigError(f"sim.expand: MjModel has no per-env field {name!r}") from err
            self._expanded[name] = view
        return view

    def is_expanded(self, name: str) -> bool:
        if name in self._expanded:
            return True
        return name in mujoco.batch.MODEL_FIELDS and self.batch.expanded(name) is not None

    def _set_const(self, env_ids: torch.Tensor | None) -> None:
        self.batch.set_const(ids=None if env_ids is None else selection.to_ids(env_ids).numpy())

    def get_state(self) -> dict[str, torch.Tensor]:
        state = {"state": self._state.clone(), "nonfinite_total": self.nonfinite_total.clone()}
        for name in sorted(mujoco.batch.MODEL_FIELDS):
            values = self.batch.expanded(name)
            if values is not None:
                state[f"model/{name}"] = _view(values).clone()
        return state

    def set_state(self, state: dict[str, torch.Tensor]) -> None:
        for key, value in state.items():
            if key.startswith("model/"):
                self.expand(key[len("model/") :]).copy_(value)
        self._state.copy_(state["state"])
        self.nonfinite_total.copy_(state["nonfinite_total"])
        self._warning_numbers[...] = 0
        self.batch.forward(stage=int(mujoco.mjtStage.mjSTAGE_ACC))
