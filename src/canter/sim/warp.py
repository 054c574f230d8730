"""The warp backend: MuJoCo Warp (mujoco_warp) on a CUDA device, or on Warp's CPU device.

All worlds live in one mujoco_warp Data whose arrays have a leading world dimension; every tensor the
simulator hands out is a zero-copy float32 torch view of those arrays (wp.to_torch), so the env reads
and writes MuJoCo Warp's own memory. MuJoCo Warp never reallocates the Data arrays these views cover
(only the island arrays of sleeping models are rebuilt), so the views stay live for the simulator's
lifetime. Model fields given per-env values by `expand()` are replaced once by (num_envs, ...) arrays,
which MuJoCo Warp's kernels index as field[world % field.shape[0]].

Semantics follow the cpu backend (canter.sim.cpu, mujoco.batch.Batch):

- step(): nstep mjw.step calls; with sensor_stage="current" the position and velocity stages and the
  position/velocity sensors are then recomputed at the new state (mjw.fwd_position, sensor_pos,
  fwd_velocity, sensor_vel: Batch.step(stage=mjSTAGE_VEL), i.e. mj_step1 without clearing the
  acceleration-stage sensors, which keep the last substep's values as in C). On CUDA the substep loop
  (and that recompute) is captured once per nstep in a CUDA graph and replayed.
- Bad controls: as mj_fwdActuation does, an env whose ctrl holds NaN/Inf/|x| > 1e10 is stepped with
  all its controls zero; its ctrl row keeps the values written.
- NaN guard: MuJoCo Warp does not check the state (MuJoCo C resets an unstable simulation with a
  warning; MuJoCo Warp lets the NaN propagate, within that world only). After each step, envs with
  NaN/Inf anywhere in their state (qpos, qvel, act, warm start, ctrl, applied forces, ...) or with
  |qpos|, |qvel| > 1e10 (mju_isBad, what MuJoCo C resets for) are flagged in `nonfinite`, counted
  in `nonfinite_total`, reset to the model defaults and forwarded. Nothing is read on the host: the
  flags are computed on the device and the reset + forward run under a Warp conditional
  (wp.capture_if on a device flag; a conditional node of the step's CUDA graph on CUDA), so the step
  never synchronizes with the host. The rows of the other envs in every derived view handed out are
  restored after it, as forward(env_ids) does.
- Capacity overflows are accumulated on the device and warned about by poll_warnings() (the env
  calls it once per training iteration), not in step().
- Construction runs forward(), so derived fields are valid before the first step (the cpu
  backend's are zero until its first call).
- forward(env_ids) runs mjw.forward over every world (it does not change the state) and then restores
  the rows of the other envs in every view handed out (sensordata and field() views), so those envs
  keep their derived values exactly as on the cpu backend. Given env ids or a mask, it (like
  set_const) runs under the same kind of Warp conditional, so a mask that names no env costs no
  forward and no host read: the env passes its reset mask every step (resets_on_device).
- joined_capture(): inside it, the simulator's work joins a CUDA graph that torch captures on its
  current stream (the whole env step as one graph, canter.envs.cuda_graph): plain kernels on that
  stream, conditional nodes for the NaN guard and masked forwards, no graphs of its own.
- Capacity: contacts (nconmax, pooled over worlds) and constraint rows (njmax, per world) are fixed at
  construction. Overflowing worlds drop constraints (objects sink in); MuJoCo Warp flags them in
  Data.overflow, exposed as `overflow`, and the simulator warns once. Defaults are sized from the
  model (see _default_capacity); SimCfg.nconmax/njmax override them.
"""

from __future__ import annotations

import contextlib
import dataclasses
import warnings
import weakref
from collections.abc import Callable, Iterator

import mujoco
import numpy as np
import torch
import warp as wp

# Warp prints a banner and a line per kernel module it loads, on stdout; keep the console and JSON
# output of Canter's commands clean (set before mujoco_warp is imported, which initializes Warp)
wp.config.quiet = True
if hasattr(wp, "LOG_WARNING"):
    wp.config.log_level = max(wp.config.log_level, wp.LOG_WARNING)
import mujoco_warp as mjw  # noqa: E402

from canter.core.errors import ConfigError  # noqa: E402
from canter.sim.backend import Simulator  # noqa: E402
from canter.sim.config import SimCfg  # noqa: E402

# mju_isBad: MuJoCo C treats NaN and |x| > mjMAXVAL as an unstable simulation
_MJMAXVAL = 1e10

# overflow bits that mean "capacity exceeded, constraints were dropped" (not solver iteration limits)
_CAPACITY_OVERFLOW = int(
    mjw.OverflowType.ALL & ~(mjw.OverflowType.ITERATIONS | mjw.OverflowType.LS_ITERATIONS)
)

# MjData fields that are simulation state (mjSTATE_INTEGRATION + ctrl and applied forces): never
# derived, so forward/set_const leave them alone
_STATE_FIELDS = frozenset(
    {
        "time", "qpos", "qvel", "act", "history", "plastic", "qacc_warmstart", "ctrl",
        "qfrc_applied", "xfrc_applied", "eq_active", "mocap_pos", "mocap_quat", "userdata",
    }
)  # fmt: skip

# Model fields mjw.set_const writes (FIXED, KIN0 and INERT0 groups). Each is computed for
# field.shape[0] worlds, so with per-env inputs they must be per-env too.
_SET_CONST_OUTPUTS = (
    "body_subtreemass", "geom_aabb", "geom_rbound", "tendon_length0", "eq_data",
    "cam_pos0", "cam_poscom0", "cam_mat0", "light_pos0", "light_poscom0", "light_dir0",
    "dof_invweight0", "body_invweight0", "tendon_invweight0", "actuator_acc0",
)  # fmt: skip


@wp.kernel
def _masked_row_fill(mask: wp.array(dtype=wp.bool), row: wp.array(dtype=wp.float32),  # type: ignore[valid-type]
                     out: wp.array2d(dtype=wp.float32)):  # type: ignore[valid-type]
    """out[i, j] = row[j] for the worlds i where mask[i] (a keyframe's values into reset worlds)."""
    i, j = wp.tid()  # pyright: ignore[reportAssignmentType, reportGeneralTypeIssues]
    if mask[i]:
        out[i, j] = row[j]


class _ReplayAllocator:
    """A Warp allocator that lets allocating warp work run as the body of a conditional CUDA graph node.

    The body of a conditional node may not allocate (CUDA allows kernels, memsets, copies and nested
    conditionals there, not memory nodes), but mjw.forward allocates scratch arrays on every call
    (collision contexts, constraint and transmission scratch, sensor buffers). The work is first run
    once eagerly while this allocator records each allocation (size, in order) from `base`, the
    device's own allocator; then, while the body is captured, the k-th allocation is served by the
    k-th recorded block and frees are no-ops. MuJoCo Warp's host code allocates the same sizes in the
    same order on every call (they depend on the model and the Data sizes, never on values: reading a
    value would be a host synchronization), and the captured body runs in stream order, so reusing
    the blocks on every replay is what a graph does with its own scratch memory. An allocation the
    recording did not see raises, and the caller falls back to deciding the condition on the host.
    The blocks live as long as the simulator (`release`)."""

    def __init__(self, base):
        self.base = base
        self.memory_kind = getattr(base, "memory_kind", None)
        self.deallocate_requires_context_guard = getattr(base, "deallocate_requires_context_guard", False)
        self.blocks: list[tuple[int, int]] = []  # (pointer, bytes) in allocation order
        self.recording = True
        self.served = 0

    def allocate(self, size_in_bytes: int) -> int:
        if self.recording:
            ptr = self.base.allocate(size_in_bytes)
            self.blocks.append((ptr, size_in_bytes))
            return ptr
        if self.served >= len(self.blocks) or self.blocks[self.served][1] < size_in_bytes:
            raise RuntimeError(f"allocation {self.served + 1} of {size_in_bytes} bytes was not seen when the "
                               f"conditional body's allocations were recorded ({len(self.blocks)} of them)")
        ptr = self.blocks[self.served][0]
        self.served += 1
        return ptr

    def deallocate(self, ptr: int, size_in_bytes: int) -> None:
        """Blocks stay for the next replay; `release` frees them."""

    def replay(self) -> None:
        """Serve the recorded blocks again, from the first."""
        self.recording = False
        self.served = 0

    def release(self) -> None:
        blocks, self.blocks = self.blocks, []
        device = getattr(self.base, "device", None)  # Warp's CUDA allocators free in their device's context
        with getattr(device, "context_guard", None) or contextlib.nullcontext():
            for ptr, size in blocks:
                self.base.deallocate(ptr, size)


def _release_all(arenas: dict) -> None:
    for arena in arenas.values():
        arena.release()


@contextlib.contextmanager
def _allocating_with(device: wp.context.Device, allocator) -> Iterator[None]:
    """Warp allocations on the CUDA `device` go through `allocator` inside the block."""
    previous = getattr(device, "_custom_allocator", None)  # a user's own allocator, restored after
    wp.set_device_allocator(device, allocator)
    try:
        yield
    finally:
        wp.set_device_allocator(device, previous)


def _spec_shapes(cls: type) -> dict[str, tuple]:
    """Declared array shapes of a mujoco_warp dataclass (Model, Option, Data), by field name."""
    shapes = {}
    for f in dataclasses.fields(cls):
        shape = getattr(f.type, "shape", None)
        if isinstance(shape, tuple) and shape:
            shapes[f.name] = shape
    return shapes


_MODEL_BATCHED = frozenset(n for n, s in _spec_shapes(mjw.Model).items() if s[0] == "*")
_OPTION_BATCHED = frozenset(n for n, s in _spec_shapes(mjw.Option).items() if s[0] == "*")
_DATA_PER_WORLD = frozenset(n for n, s in _spec_shapes(mjw.Data).items() if s[0] == "nworld")


def _default_capacity(model: mujoco.MjModel) -> tuple[int | None, int]:
    """(nconmax, njmax) for a model: MuJoCo Warp's default contact pool, and enough constraint rows
    per world for every moving geom touching the ground at once.

    MuJoCo Warp's own njmax default (64 rows for a model without height fields) is too small for e.g.
    the ant lying on its back (a sphere and 8 capsules: up to 17 contacts of 4 pyramidal rows, plus
    8 joint limits = 76 rows). Contacts per geom against a plane: 1 for spheres/ellipsoids, 2 for
    capsules, 4 otherwise; plus limits, equality and friction-loss rows.
    nconmax stays at MuJoCo Warp's default (None; 48 per world for models without height fields,
    pooled over the worlds, so a few contacts per world on average is plenty).
    """
    contacts = 0
    condim = 1
    if not model.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_CONTACT:
        collidable = (model.geom_contype | model.geom_conaffinity) != 0
        moving = model.body_weldid[model.geom_bodyid] != 0
        per_geom = np.full(model.ngeom, 4)
        per_geom[
            np.isin(model.geom_type, (mujoco.mjtGeom.mjGEOM_SPHERE, mujoco.mjtGeom.mjGEOM_ELLIPSOID))
        ] = 1
        per_geom[model.geom_type == mujoco.mjtGeom.mjGEOM_CAPSULE] = 2
        contacts = int(per_geom[collidable & moving].sum()) + 4 * model.npair
        dims = np.concatenate([[1], model.geom_condim[collidable], model.pair_dim])
        condim = int(dims.max())
    if model.opt.cone == mujoco.mjtCone.mjCONE_PYRAMIDAL:
        rows_per_contact = max(1, 2 * (condim - 1))
    else:
        rows_per_contact = condim
    eq_rows = {int(mujoco.mjtEq.mjEQ_CONNECT): 3, int(mujoco.mjtEq.mjEQ_WELD): 6}
    rows = (
        contacts * rows_per_contact
        + int(model.jnt_limited.sum())
        + int(model.tendon_limited.sum())
        + sum(eq_rows.get(int(t), 1) for t in model.eq_type)
        + int((model.dof_frictionloss > 0).sum())
        + int((model.tendon_frictionloss > 0).sum())
    )
    try:  # MuJoCo Warp's heuristic as a floor (private helper; fall back to its documented value)
        from mujoco_warp._src.io import _default_njmax

        floor = int(_default_njmax(model))
    except (ImportError, AttributeError, TypeError):
        floor = 64
    return None, max(floor, -(-rows // 16) * 16)


def _torch_view(array: wp.array, template: np.ndarray | None, num_envs: int) -> torch.Tensor:
    """Zero-copy torch view of a per-world warp array, shaped (num_envs, *template.shape) when the
    template (the MuJoCo C field) holds as many elements per world (xmat: (nbody, 9), not (nbody, 3, 3))."""
    view = wp.to_torch(array, requires_grad=False)
    if (
        template is not None
        and view.dim() >= 1
        and view.shape[0] == num_envs
        and int(np.prod(template.shape)) == view[0].numel()
        and view.is_contiguous()
    ):
        view = view.view(num_envs, *template.shape)
    return view


class WarpSimulator(Simulator):
    """mujoco_warp behind the Simulator interface; tensors are float32 on `device`.

    Extra attributes: `overflow` (num_envs,) int32 bitmask of mjw.OverflowType per env, sticky until
    the env is reset; `nconmax`, `njmax` the capacities in use; `mjw_model`, `mjw_data` the
    underlying mujoco_warp objects.
    """

    resets_on_device = True

    def __init__(self, model: mujoco.MjModel, num_envs: int, cfg: SimCfg, device: torch.device):
        if num_envs < 1:
            raise ConfigError(f"num_envs: must be >= 1, got {num_envs}")
        if device.type == "cuda":
            device = torch.device(
                "cuda", torch.cuda.current_device() if device.index is None else device.index
            )
        elif device.type != "cpu":
            raise ConfigError(f"sim.backend: 'warp' runs on cpu or cuda devices, not {device}")
        wp.init()
        self.model = model
        self.cfg = cfg
        self.num_envs = num_envs
        self.device = device
        self.dtype = torch.float32
        self._wp_device = wp.get_device("cpu" if device.type == "cpu" else f"cuda:{device.index}")
        self._stream = wp.Stream(self._wp_device) if device.type == "cuda" else None
        self._current = cfg.sensor_stage == "current"
        default_nconmax, default_njmax = _default_capacity(model)
        nconmax = cfg.nconmax if cfg.nconmax is not None else default_nconmax
        njmax = cfg.njmax if cfg.njmax is not None else default_njmax
        with wp.ScopedDevice(self._wp_device):
            try:
                self.mjw_model = mjw.put_model(model)
                self.mjw_data = mjw.make_data(model, nworld=num_envs, nconmax=nconmax, njmax=njmax)
            except (NotImplementedError, ValueError) as err:
                message = " ".join(str(err).split())
                raise ConfigError(f"sim.backend: MuJoCo Warp cannot simulate this model: {message}") from err
        # overflows are reported through `overflow` and one Python warning, not a printf per world
        # and step from inside the kernels (which also prints solver iteration limits)
        self.mjw_model.opt.warn_overflow = 0
        self.nconmax = self.mjw_data.naconmax // num_envs
        self.njmax = self.mjw_data.njmax
        self._template = mujoco.MjData(model)
        self._graphs: dict[tuple, wp.Graph] = {}
        # bumped whenever captured work would hold stale arrays (expand, set_default_keyframe): a CUDA
        # graph of the whole env step (canter.envs.cuda_graph) is captured again when it changes
        self.graph_epoch = 0
        self._joined: wp.Stream | None = None  # the stream of an outer CUDA graph capture (joined_capture)
        self._fields: dict[str, torch.Tensor] = {}
        self._expanded: dict[str, torch.Tensor] = {}  # name -> view, for expand() and set_const()
        self._overflow_warned = False
        # the per-world reset mask mjw.reset_data reads: one persistent array, so that the reset can
        # be a CUDA graph (reset_data builds its kernels on every call: ~15 ms of Python otherwise)
        with wp.ScopedDevice(self._wp_device):
            self._reset_mask_wp = wp.zeros(num_envs, dtype=bool)
            self._any_bad_wp = wp.zeros(1, dtype=wp.int32)  # _run_if's condition, on the device
        self._reset_mask = wp.to_torch(self._reset_mask_wp)
        self._any_bad = wp.to_torch(self._any_bad_wp)
        self._key_rows: list[tuple[wp.array, wp.array]] = []  # (keyframe row, Data array) per state field
        self._host_conditions: set[tuple] = set()  # _run_if keys whose conditional failed to capture
        self._arenas: dict[tuple, _ReplayAllocator] = {}  # _run_if key -> its body's recorded scratch memory
        weakref.finalize(self, _release_all, self._arenas).atexit = False  # Warp may be gone by then

        self.qpos = self.field("qpos")
        self.qvel = self.field("qvel")
        self.act = self.field("act")
        self.ctrl = self.field("ctrl")
        self.xfrc_applied = self.field("xfrc_applied")
        self.sensordata = self.field("sensordata")
        self.overflow = wp.to_torch(self.mjw_data.overflow)
        # the real-valued state of each env, as (num_envs, n) rows, for the NaN guard
        self._state_rows = [
            view.reshape(num_envs, -1)
            for view in (self.field(name) for name in sorted(_STATE_FIELDS))
            if view.is_floating_point() and view[0].numel()
        ]
        self.nonfinite = torch.zeros(num_envs, dtype=torch.bool, device=device)
        self.nonfinite_total = torch.zeros((), dtype=torch.int64, device=device)
        self._overflow_seen = torch.zeros((), dtype=torch.int64, device=device)  # envs, summed over steps
        self.forward()  # derived fields and sensors describe the initial state (cpu: zero until a call)

    # ---------------------------------------------------------------- stepping

    def step(self, nstep: int = 1) -> None:
        if nstep < 1:
            raise ValueError(f"nstep must be >= 1, got {nstep}")
        ctrl = None
        if self.ctrl.shape[1]:
            # mj_fwdActuation: a NaN/Inf/huge control zeroes all controls of that env for the step
            ctrl = self.ctrl.clone()
            bad_ctrl = ~self._good_rows(self.ctrl)
            self.ctrl.masked_fill_(bad_ctrl.unsqueeze(1), 0.0)
        self._run(("step", nstep), lambda: self._substeps(nstep))
        if ctrl is not None:
            self.ctrl.copy_(ctrl)
        # as the cpu backend: NaN/Inf anywhere in the state, or what MuJoCo C resets for (mju_isBad
        # qpos/qvel; bad qacc turns qvel bad after integration)
        total = self._state_rows[0].sum(dim=1)
        for rows in self._state_rows[1:]:
            total = total + rows.sum(dim=1)
        bad = ~torch.isfinite(total) | ~self._good_rows(self.qpos) | ~self._good_rows(self.qvel)
        self.nonfinite = bad
        self.nonfinite_total += bad.sum()
        self._overflow_seen += ((self.overflow & _CAPACITY_OVERFLOW) != 0).sum()
        self._recover(bad)

    @property
    def any_nonfinite(self) -> bool | None:
        """None: this backend keeps the answer on the device (read `nonfinite` as a mask)."""
        return None

    def _recover(self, bad: torch.Tensor) -> None:
        """Reset and forward the envs in `bad`, deciding on the device whether there are any."""
        self._reset_mask.copy_(bad)
        derived = self._derived_views()
        saved = [view.clone() for view in derived]
        self._run_if(("recover",), bad, self._recover_body)
        for view, old in zip(derived, saved, strict=True):
            rows = bad.view(-1, *([1] * (view.dim() - 1)))
            view.copy_(torch.where(rows, view, old))

    def _run_if(self, key: tuple, mask: torch.Tensor, work: Callable[[], None], capture: bool = True) -> None:
        """Run warp `work` if any env of the (num_envs,) bool `mask` is set, decided on the device: a
        Warp conditional (wp.capture_if; a conditional node of the CUDA graph on CUDA). Where that
        cannot be captured, the flag is read on the host instead (one synchronization), with a warning,
        and `work` runs as a CUDA graph if `capture`, else directly."""
        self._any_bad.copy_(mask.any())
        if self._joined is not None and (key in self._host_conditions or (
                self._stream is not None and key not in self._arenas)):
            raise RuntimeError(f"sim: {key[0]} cannot join a CUDA graph capture: "
                               + ("its condition is read on the host" if key in self._host_conditions
                                  else "it has not run eagerly yet (its allocations are recorded then)"))
        if key not in self._host_conditions:
            try:
                body = work if self._stream is None else self._without_allocations(key, work)
                self._run(key, lambda: wp.capture_if(self._any_bad_wp, on_true=body))
                return
            except Exception as err:  # e.g. a CUDA stack without conditional graph nodes
                self._host_conditions.add(key)
                self._graphs.pop(key, None)
                warnings.warn(f"sim: {key[0]} cannot run as a conditional CUDA graph node ({err}); it reads its "
                              "condition on the host instead (one synchronization per call)", RuntimeWarning,
                              stacklevel=3)
        if bool(self._any_bad):
            if capture:
                self._run((*key, "plain"), work)
            else:
                with self._scope():
                    work()

    def _without_allocations(self, key: tuple, work: Callable[[], None]) -> Callable[[], None]:
        """`work` for the body of a conditional graph node on CUDA, which may not allocate: the first
        time per key, run `work` once eagerly to record its allocations (_ReplayAllocator); the body
        then serves them from the recorded blocks. Running the work once regardless of the condition
        is harmless for every body here: forward and set_const only recompute derived values (the
        caller restores the other envs' rows), and a reset touches only the masked envs."""
        arena = self._arenas.get(key)
        if arena is None and key not in self._graphs:
            arena = _ReplayAllocator(self._wp_device.get_allocator())
            self._arenas[key] = arena
            with self._scope(), _allocating_with(self._wp_device, arena):
                work()
        if arena is None:  # captured already: the graph is replayed, the body not called
            return work

        def body() -> None:
            arena.replay()
            with _allocating_with(self._wp_device, arena):
                work()

        return body

    def _recover_body(self) -> None:
        self._reset_body()
        mjw.forward(self.mjw_model, self.mjw_data)

    @contextlib.contextmanager
    def joined_capture(self) -> Iterator[None]:
        """Inside the block, this simulator's warp work joins the CUDA graph capture that torch runs
        on its current stream (torch.cuda.graph): registered with Warp as an external capture, on
        that stream, as plain kernels (no nested graphs) and conditional nodes for the NaN guard and
        masked forwards. Their allocations must have been recorded by an eager call first."""
        if self._stream is None:
            raise RuntimeError("sim: joined_capture needs a CUDA device")
        stream = wp.stream_from_torch(torch.cuda.current_stream(self.device))
        wp.capture_begin(stream=stream, external=True, force_module_load=False)
        self._joined = stream
        try:
            yield
        finally:
            self._joined = None
            wp.capture_end(stream=stream)

    def uncapturable(self) -> str | None:
        """Why this simulator's step cannot join a CUDA graph capture, or None: a conditional body that
        fell back to reading its condition on the host (see _run_if's warning)."""
        if self._stream is None:
            return "the simulator is not on a CUDA device"
        if self._host_conditions:
            names = ", ".join(sorted(key[0] for key in self._host_conditions))
            return f"sim: {names} read their condition on the host (their Warp work could not run as a conditional node)"
        return None

    def poll_warnings(self) -> None:
        """Warn (once per simulator) if any env ran out of contact/constraint capacity since the last
        call: one host read, for callers to make once per iteration."""
        envs = int(self._overflow_seen)
        self._overflow_seen.zero_()
        if envs and not self._overflow_warned:
            self._overflow_warned = True
            warnings.warn(
                f"sim: MuJoCo Warp ran out of contact/constraint capacity ({envs} env-steps of {self.num_envs} envs "
                f"since the last check; nconmax={self.nconmax} per env pooled, njmax={self.njmax}); constraints were "
                "dropped. Raise sim.nconmax / sim.njmax (see WarpSimulator.overflow for the mjw.OverflowType bits).",
                RuntimeWarning,
                stacklevel=2,
            )

    def _substeps(self, nstep: int) -> None:
        m, d = self.mjw_model, self.mjw_data
        for _ in range(nstep):
            mjw.step(m, d)
        if self._current:
            # Batch.step(stage=mjSTAGE_VEL): position and velocity stages at the new state. Not
            # mjw.step1, which clears sensordata: acceleration-stage sensors keep the last substep's
            # values, as in MuJoCo C.
            energy = bool(m.opt.enableflags & mujoco.mjtEnableBit.mjENBL_ENERGY)
            mjw.fwd_position(m, d)
            mjw.sensor_pos(m, d)
            if energy:
                mjw.energy_pos(m, d)
            mjw.fwd_velocity(m, d)
            mjw.sensor_vel(m, d)
            if energy:
                mjw.energy_vel(m, d)

    def reset(self, env_ids: torch.Tensor | None = None) -> None:
        """mjw.reset_data with a per-world mask: qpos0, zero velocities, activations, warm starts,
        controls, applied forces, userdata and time, mocap poses from the model, eq_active0."""
        mask = self._mask(env_ids)
        if mask is None:
            self._reset_mask.fill_(True)
        else:
            self._reset_mask.copy_(mask)
        self._run(("reset",), self._reset_body)

    def _reset_body(self) -> None:
        """Warp work only (it runs inside the NaN guard's conditional): mjw.reset_data of the worlds
        in the reset mask, then the default keyframe's state into them."""
        mjw.reset_data(self.mjw_model, self.mjw_data, reset=self._reset_mask_wp)
        for row, out in self._key_rows:
            wp.launch(_masked_row_fill, dim=out.shape, inputs=[self._reset_mask_wp, row, out])

    def set_default_keyframe(self, key: int) -> None:
        self.default_key = int(key)
        model = self.model
        self._key_rows = []
        data = self.mjw_data
        with wp.ScopedDevice(self._wp_device):
            for values, out in ((model.key_qpos, data.qpos), (model.key_qvel, data.qvel),
                                (model.key_act, data.act), (model.key_ctrl, data.ctrl)):
                if out.shape[1]:
                    self._key_rows.append((wp.array(values[key].astype(np.float32), dtype=wp.float32), out))
        self._graphs.clear()  # captured resets hold the previous rows
        self.graph_epoch += 1

    def forward(self, env_ids: torch.Tensor | None = None) -> None:
        mask = self._mask(env_ids)

        def work() -> None:
            mjw.forward(self.mjw_model, self.mjw_data)

        if mask is None:
            self._run(("forward",), work)
            return
        with self._preserve(~mask, self._derived_views()):
            self._run_if(("forward_if",), mask, work)  # nothing to do when no env is named

    # ---------------------------------------------------------------- fields

    def field(self, name: str) -> torch.Tensor:
        view = self._fields.get(name)
        if view is not None:
            return view
        array = getattr(self.mjw_data, name, None) if name in _DATA_PER_WORLD else None
        if not isinstance(array, wp.array) or array.shape[0] != self.num_envs:
            raise ConfigError(
                f"sim.field: MuJoCo Warp Data has no per-env field {name!r}"
                + (
                    " (contacts and constraint rows are pooled, not per env)"
                    if name.startswith(("contact", "efc"))
                    else ""
                )
            )
        template = getattr(self._template, name, None)
        view = _torch_view(array, template if isinstance(template, np.ndarray) else None, self.num_envs)
        self._fields[name] = view
        return view

    def expand(self, name: str) -> torch.Tensor:
        """Per-env values of a model field, as a live (num_envs, ...) view (float32 for real fields).

        Any MuJoCo Warp Model field declared with a batch dimension can be expanded ('body_mass',
        'geom_friction', 'actuator_gainprm', 'dof_damping', ...; shapes as in MjModel), and the
        batched options as 'opt.<name>' ('opt.gravity', 'opt.timestep', 'opt.wind', ...). MjModel
        fields MuJoCo Warp shares between worlds (e.g. 'geom_condim', 'jnt_limited') raise ConfigError.
        put_model derives a few feature switches from the values it is given (fluid forces when
        density/viscosity/wind are non-zero, actuator derivatives for implicit integration): changing
        such a value between zero and non-zero per env is not picked up.
        """
        view = self._expanded.get(name)
        if view is not None:
            return view
        owner, attr, template = self._model_field(name)
        array = getattr(owner, attr)
        if array.shape[0] != self.num_envs:
            with self._scope():  # allocated in stream order; torch fills it after the scope
                expanded = wp.empty((self.num_envs, *array.shape[1:]), dtype=array.dtype)
            values = wp.to_torch(expanded)
            values.copy_(wp.to_torch(array).expand_as(values))
            expanded._is_batched = True  # as mjw.put_model marks batched fields
            setattr(owner, attr, expanded)
            array = expanded
            self._graphs.clear()  # captured graphs hold the replaced array
            self.graph_epoch += 1
        view = _torch_view(array, template, self.num_envs)
        self._expanded[name] = view
        return view

    def _set_const(self, env_ids: torch.Tensor | None) -> None:
        """mjw.set_const: recompute the constants MuJoCo derives from model fields (body_subtreemass,
        dof_invweight0, body_invweight0, actuator_acc0, geom bounds, ...) for the given envs.

        Covers the fields mjw.set_const lists (qpos0, body_mass, body_inertia, body_ipos/iquat,
        body_pos/quat, dof_armature, actuator_gear/armature, eq_data, geom_size, cam/light poses).
        Unlike mj_setConst it computes in float32 and skips actuator_length0 and the spring
        group (tendon_lengthspring from qpos_spring). When any field is expanded, the derived
        constants are expanded too; the other envs' constants and every env's state and derived
        views are left as they were.
        """
        mask = self._mask(env_ids)
        if self._expanded:
            for name in _SET_CONST_OUTPUTS:
                if getattr(self.mjw_model, name).size:
                    self.expand(name)
        outputs = [self._expanded[name] for name in _SET_CONST_OUTPUTS if name in self._expanded]
        keep = None if mask is None else ~mask
        all_rows = torch.ones(self.num_envs, dtype=torch.bool, device=self.device)
        with self._preserve(keep, outputs), self._preserve(all_rows, self._derived_views()):
            if mask is None:
                with self._scope():
                    mjw.set_const(self.mjw_model, self.mjw_data)
            else:  # nothing to do when no env is named (a mask from a step without resets)
                self._run_if(("set_const_if",), mask, lambda: mjw.set_const(self.mjw_model, self.mjw_data),
                             capture=False)

    def get_state(self) -> dict[str, torch.Tensor]:
        """Copies of every state field (time, qpos, qvel, act, qacc_warmstart, ctrl, applied forces,
        mocap, eq_active, ...), of the per-env model fields ('model/<name>') and of nonfinite_total.

        Stepping after set_state() repeats bitwise on Warp's CPU device. On CUDA, MuJoCo Warp
        gathers contacts with atomics, so float32 results may differ in the last bits from run to run
        unless mjw_model.opt.deterministic is set.
        """
        state = {name: self.field(name).clone() for name in sorted(_STATE_FIELDS)}
        for name, view in sorted(self._expanded.items()):
            state[f"model/{name}"] = view.clone()
        state["nonfinite_total"] = self.nonfinite_total.clone()
        return state

    def set_state(self, state: dict[str, torch.Tensor]) -> None:
        for key, value in state.items():
            if key.startswith("model/"):
                self.expand(key[len("model/") :]).copy_(value)
            elif key == "nonfinite_total":
                self.nonfinite_total.copy_(value)
            elif key in _STATE_FIELDS:
                self.field(key).copy_(value)
            else:
                raise ConfigError(f"sim.set_state: {key!r} is not a field of a warp backend state")
        self.forward()

    def is_expanded(self, name: str) -> bool:
        return name in self._expanded

    # ---------------------------------------------------------------- helpers

    def _model_field(self, name: str) -> tuple[object, str, np.ndarray | None]:
        """(owner object, attribute, MjModel template) of an expandable field name."""
        if name.startswith("opt."):
            attr = name[4:]
            if attr in _OPTION_BATCHED:
                template = getattr(self.model.opt, attr, None)
                return self.mjw_model.opt, attr, None if template is None else np.asarray(template)
        elif name in _MODEL_BATCHED:
            template = getattr(self.model, name, None)
            return self.mjw_model, name, template if isinstance(template, np.ndarray) else None
        if (
            hasattr(self.model.opt, name[4:])
            if name.startswith("opt.")
            else isinstance(getattr(self.model, name, None), np.ndarray)
        ):
            reason = "MuJoCo Warp shares it between worlds"
        else:
            reason = "no such MjModel field (options are named 'opt.<name>')"
        raise ConfigError(f"sim.expand: model field {name!r} cannot have per-env values: {reason}")

    def _derived_views(self) -> list[torch.Tensor]:
        return [view for name, view in self._fields.items() if name not in _STATE_FIELDS]

    def _mask(self, env_ids: torch.Tensor | None) -> torch.Tensor | None:
        """A (num_envs,) bool mask on the device from env ids or a mask; None for all envs."""
        if env_ids is None:
            return None
        env_ids = torch.as_tensor(env_ids, device=self.device)
        if env_ids.dtype == torch.bool:
            if env_ids.shape != (self.num_envs,):
                raise ValueError(
                    f"an env mask must have shape ({self.num_envs},), got {tuple(env_ids.shape)}"
                )
            return env_ids.contiguous()
        mask = torch.zeros(self.num_envs, dtype=torch.bool, device=self.device)
        return mask.index_fill_(0, env_ids.long(), True)

    @staticmethod
    def _good_rows(tensor: torch.Tensor) -> torch.Tensor:
        """Rows free of NaN, Inf and values beyond mjMAXVAL (mju_isBad); NaN compares False."""
        return (tensor.abs() <= _MJMAXVAL).all(dim=1)

    @contextlib.contextmanager
    def _preserve(self, keep: torch.Tensor | None, views: list[torch.Tensor]) -> Iterator[None]:
        """Restore the rows marked in `keep` of each view after the block."""
        if keep is None or not views:
            yield
            return
        saved = [view.clone() for view in views]
        yield
        for view, old in zip(views, saved, strict=True):
            rows = keep.view(-1, *([1] * (view.dim() - 1)))
            view.copy_(torch.where(rows, old, view))

    def _run(self, key: tuple, work: Callable[[], None]) -> None:
        """Run warp work; on CUDA capture it as a CUDA graph on first use (per key) and replay it.
        Graphs hold array addresses, so they are dropped when expand() replaces a model array."""
        with self._scope():
            if self._stream is None or self._joined is not None:  # no graphs, or inside an outer one
                work()
                return
            graph = self._graphs.get(key)
            if graph is None:
                with wp.ScopedCapture(device=self._wp_device) as capture:
                    work()
                graph = capture.graph
                assert graph is not None
                self._graphs[key] = graph
            wp.capture_launch(graph)

    def warp_scope(self) -> contextlib.AbstractContextManager[None]:
        """The device and stream scope this simulator runs its warp work in, for other warp work on
        its arrays (a camera's render): ordered after queued torch work, before later torch work."""
        return self._scope()

    @contextlib.contextmanager
    def _scope(self) -> Iterator[None]:
        """Run warp work on this simulator's device; on CUDA, on its own stream, ordered after the
        torch work queued so far and before the torch work queued after."""
        with wp.ScopedDevice(self._wp_device):
            if self._stream is None:
                yield
                return
            if self._joined is not None:  # an outer capture: its stream, in torch's order already
                with wp.ScopedStream(self._joined, sync_enter=False):
                    yield
                return
            torch_stream = wp.stream_from_torch(torch.cuda.current_stream(self.device))
            self._stream.wait_stream(torch_stream)
            with wp.ScopedStream(self._stream, sync_enter=False):
                yield
            torch_stream.wait_stream(self._stream)
