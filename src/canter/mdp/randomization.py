"""Domain randomization: event terms `(env, env_ids, **params)` that draw per-env physics parameters.

Use them with mode "startup" (drawn once per env) or "reset" (drawn again at each episode start).
Each term draws from the env's generator (same seed, same draws; values are drawn in float32 and then
cast to the simulator's dtype), writes only the selected rows (`env_ids`, env indices or a mask: see
canter.core.selection; with a mask, values are drawn for every env and kept for the selected ones, so
the warp backend's draws differ from the cpu backend's) of per-env model fields through
`sim.expand()`, and calls `sim.set_const(env_ids)` after changing a field MuJoCo derives constants
from (masses, inertias, centres of mass, gears).

Values are relative to the model's nominal ones (`env.sim.model`), so drawing again never compounds.

Logging: every term keeps the values it drew in `env.randomization_state[name]`, a (num_envs, ...)
tensor whose rows hold the neutral value (nominal friction, zero added mass or offset, scale 1,
delay 0) until an env is first drawn, and writes `randomization_summary(name, ...)` (mean, min,
max, std over every env) into `env.extras["log"]`, which the runner averages into TensorBoard scalars
`Randomization/<name>/...`. Reset-mode terms log at every step in which some env reset (every step
with a mask); startup
terms log once, in the extras of `env.reset()` and of the first step (so at the first training
iteration) and again after a resume. `name` (a parameter of every term) is the key; give two terms
of the same kind different names. The state is part of env checkpoints (`env.state_dict()`), so a
resumed run logs what an uninterrupted one would.

Strength: when a curriculum sets `env.randomization_strength` (a () tensor s in [0, 1]; None, the
default, leaves every draw as it is), each term pulls what it drew towards its neutral value:
neutral + s x (drawn - neutral), so s = 0 is the nominal model and s = 1 the full ranges (friction
towards the nominal friction, added mass and offsets towards 0, scales towards 1, noise and gravity
noise times s; an action delay is kept with probability s). Dactyl's automatic domain randomization
widens its ranges as the policy copes; `canter.tasks.hand.mdp.RandomizationCurriculum` is such a
curriculum. Visual randomization (mdp.visual) and observation noise are not scaled.

Sensor noise is not here: it is the observation manager's per-term `noise` (see managers.observation).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import mujoco
import torch

from canter.core import selection
from canter.core.errors import ConfigError
from canter.scene.entity import Resolved

if TYPE_CHECKING:
    from canter.envs.manager_env import ManagerBasedRLEnv

_MIN_MASS = 1e-4  # kg; a body's mass after adding a negative mass is clamped to this


# ------------------------------------------------------------------------------------- helpers


def randomization_summary(name: str, values: torch.Tensor) -> dict[str, torch.Tensor]:
    """{"Randomization/<name>/mean" | "/min" | "/max" | "/std": () float32} over every element of
    `values` (all envs, objects and components); std is the population standard deviation."""
    flat = values.detach().float().flatten()
    prefix = f"Randomization/{name}"
    low, high = torch.aminmax(flat)  # one pass (torch.std_mean is ~6x slower than std and mean apart)
    return {f"{prefix}/mean": flat.mean(), f"{prefix}/min": low, f"{prefix}/max": high,
            f"{prefix}/std": flat.std(correction=0)}


def _record(
    env: ManagerBasedRLEnv, name: str, env_ids: torch.Tensor, values: torch.Tensor, neutral: torch.Tensor
) -> None:
    """Store the drawn rows in env.randomization_state[name] (created lazily, other rows = `neutral`)
    and put the summary over all envs into env.extras["log"]."""
    state = getattr(env, "randomization_state", None)
    if state is None:
        state = {}
        env.randomization_state = state
    current = state.get(name)
    if current is None:
        current = neutral.to(values.dtype).expand(env.num_envs, *values.shape[1:]).clone()
        state[name] = current
    selection.put(current, env_ids, values)
    env.extras.setdefault("log", {}).update(randomization_summary(name, current))


def _sample(env: ManagerBasedRLEnv, shape: tuple[int, ...], bounds: tuple[float, float]) -> torch.Tensor:
    """U(bounds) of `shape`, drawn in float32 from the env's generator, in the simulator's dtype."""
    u = torch.rand(shape, generator=env.generator, device=env.device)
    return (bounds[0] + (bounds[1] - bounds[0]) * u).to(env.sim.dtype)


def _strength(env: ManagerBasedRLEnv) -> torch.Tensor | None:
    """The env's randomization strength s, a () tensor a curriculum owns (see the module docstring), or None."""
    return getattr(env, "randomization_strength", None)


def _toward_neutral(env: ManagerBasedRLEnv, values: torch.Tensor, neutral: torch.Tensor | float) -> torch.Tensor:
    """`values` pulled towards `neutral` by the env's randomization strength s: neutral + s x (values -
    neutral); `values` unchanged when no strength is set."""
    strength = _strength(env)
    if strength is None:
        return values
    return neutral + strength.to(values.dtype) * (values - neutral)


def _check_range(term: str, param: str, bounds: tuple[float, float], minimum: float | None = None) -> None:
    low, high = bounds
    if not low <= high or (minimum is not None and low < minimum):
        floor = "" if minimum is None else f"{minimum} <= "
        raise ConfigError(f"{term}: {param} needs {floor}low <= high, got {tuple(bounds)}")


def _nominal(env: ManagerBasedRLEnv, field: str, ids: torch.Tensor) -> torch.Tensor:
    """Rows `ids` of the model's nominal (compiled) field, in the simulator's dtype and device (do not
    write to it: gathered once per env, field and selection, as the nominal model never changes)."""
    return _model_fact(env, ("nominal", field, ids), lambda: env.scene.model_field(field)[ids])


def _model_ids(env: ManagerBasedRLEnv, selection: Resolved) -> list[int]:
    """The selection's MuJoCo ids on the host (looked up by name: no device-to-host copy)."""
    lookup = {"actuator": env.sim.model.actuator, "body": env.sim.model.body, "geom": env.sim.model.geom}
    return [lookup[selection.kind](name).id for name in selection.names]


# per env: facts about its (never changing) model that a term works out from the selection in a
# Python loop, kept after the first call so a reset-mode term checks and classifies only once
_MODEL_FACTS: weakref.WeakKeyDictionary[Any, dict[tuple[Any, ...], Any]] = weakref.WeakKeyDictionary()


def _model_fact(env: ManagerBasedRLEnv, key: tuple[Any, ...], compute: Callable[[], Any]) -> Any:
    """compute(), evaluated at the first call for this env and key (which must name everything the
    result depends on besides the env's model), returned again afterwards; an error is raised each time."""
    facts = _MODEL_FACTS.setdefault(env, {})
    if key not in facts:
        facts[key] = compute()
    return facts[key]


def _require_kind(term: str, param: str, selection: Resolved, kind: str) -> None:
    if selection.kind != kind:
        raise ConfigError(f"{term}: {param} must select {kind} names, got a {selection.kind} selection")


# ------------------------------------------------------------------------------ contact and mass


def randomize_friction(
    env: ManagerBasedRLEnv,
    env_ids: torch.Tensor,
    geoms: Resolved,
    friction_range: tuple[float, float],
    name: str = "friction",
) -> None:
    """Sliding friction (geom_friction[:, geoms, 0]) = one U(friction_range) value per env, written to
    every selected geom; torsional and rolling friction keep their nominal values.

    MuJoCo combines the frictions of two touching geoms by taking the max, unless their `priority`
    differs, in which case the higher-priority geom's friction is used alone. So either select the
    robot's feet *and* the floor/terrain geoms (e.g. geoms(".*_foot", "floor")): both sides then hold
    the same value and the contact gets exactly it; or give the feet a higher priority than the
    ground (the Canter dog's feet have priority 1) and select the feet only. Randomizing the feet
    alone against a same-priority floor gives max(drawn, floor), which clips the low end of the range.
    Logged: (num_envs, geoms) friction coefficients.
    """
    _require_kind("randomize_friction", "geoms", geoms, "geom")
    _check_range("randomize_friction", "friction_range", friction_range, minimum=0.0)
    nominal = _nominal(env, "geom_friction", geoms.ids)[:, 0]
    value = _sample(env, (selection.rows(env_ids), 1), friction_range).expand(-1, geoms.count)
    value = _toward_neutral(env, value, nominal)
    selection.put(env.sim.expand("geom_friction"), env_ids, value, geoms.ids, 0)
    _record(env, name, env_ids, value, nominal)


def randomize_added_mass(
    env: ManagerBasedRLEnv,
    env_ids: torch.Tensor,
    bodies: Resolved,
    mass_range: tuple[float, float],
    name: str = "added_mass",
) -> None:
    """body_mass = nominal + U(mass_range) kg, per env and body (e.g. a payload on the trunk).

    The body's inertia is scaled by new mass / current mass, i.e. the added mass is spread like the
    body's own (uniform density), and any inertia scale drawn by randomize_inertia_scale is kept.
    Masses are clamped to >= 1e-4 kg. Use either this term or mdp.randomize_body_mass on a body, not
    both: each sets the mass from the nominal one. Logged: (num_envs, bodies) added kg.
    """
    _require_kind("randomize_added_mass", "bodies", bodies, "body")
    _check_range("randomize_added_mass", "mass_range", mass_range)
    added = _toward_neutral(env, _sample(env, (selection.rows(env_ids), bodies.count), mass_range), 0.0)
    mass_field = env.sim.expand("body_mass")
    inertia_field = env.sim.expand("body_inertia")
    old_mass = selection.take(mass_field, env_ids, bodies.ids)
    new_mass = (_nominal(env, "body_mass", bodies.ids) + added).clamp_min(_MIN_MASS)
    ratio = torch.where(old_mass > 0, new_mass / old_mass.clamp_min(_MIN_MASS), torch.ones_like(new_mass))
    inertia = selection.take(inertia_field, env_ids, bodies.ids) * ratio[..., None]
    selection.put(inertia_field, env_ids, inertia, bodies.ids)
    selection.put(mass_field, env_ids, new_mass, bodies.ids)
    env.sim.set_const(env_ids)
    actual = new_mass - _nominal(env, "body_mass", bodies.ids)
    _record(env, name, env_ids, actual, torch.zeros((), device=env.device))


def randomize_com_offset(
    env: ManagerBasedRLEnv,
    env_ids: torch.Tensor,
    bodies: Resolved,
    offset_range: tuple[float, float],
    name: str = "com_offset",
) -> None:
    """body_ipos = nominal + U(offset_range) m on each of x, y, z (body frame), per env and body:
    the centre of mass moves, the mass and principal inertia stay. Logged: (num_envs, bodies, 3) m."""
    _require_kind("randomize_com_offset", "bodies", bodies, "body")
    _check_range("randomize_com_offset", "offset_range", offset_range)
    offset = _toward_neutral(env, _sample(env, (selection.rows(env_ids), bodies.count, 3), offset_range), 0.0)
    ipos = _nominal(env, "body_ipos", bodies.ids) + offset
    selection.put(env.sim.expand("body_ipos"), env_ids, ipos, bodies.ids)
    env.sim.set_const(env_ids)
    _record(env, name, env_ids, offset, torch.zeros((), device=env.device))


def randomize_inertia_scale(
    env: ManagerBasedRLEnv,
    env_ids: torch.Tensor,
    bodies: Resolved,
    scale_range: tuple[float, float],
    name: str = "inertia_scale",
) -> None:
    """body_inertia = nominal * (current mass / nominal mass) * U(scale_range), one scale per env and
    body for all three principal moments (so the inertia stays physically valid). The mass factor
    keeps a mass drawn by randomize_added_mass / randomize_body_mass consistent, whichever runs
    first. Logged: (num_envs, bodies) scales."""
    _require_kind("randomize_inertia_scale", "bodies", bodies, "body")
    _check_range("randomize_inertia_scale", "scale_range", scale_range, minimum=1e-6)
    scale = _toward_neutral(env, _sample(env, (selection.rows(env_ids), bodies.count), scale_range), 1.0)
    nominal_mass = _nominal(env, "body_mass", bodies.ids)
    mass_ratio = torch.where(
        nominal_mass > 0,
        selection.take(env.sim.expand("body_mass"), env_ids, bodies.ids) / nominal_mass.clamp_min(_MIN_MASS),
        torch.ones_like(scale),
    )
    inertia = _nominal(env, "body_inertia", bodies.ids) * (mass_ratio * scale)[..., None]
    selection.put(env.sim.expand("body_inertia"), env_ids, inertia, bodies.ids)
    env.sim.set_const(env_ids)
    _record(env, name, env_ids, scale, torch.ones((), device=env.device))


# ------------------------------------------------------------------------------------ actuators


def _position_actuators(env: ManagerBasedRLEnv, term: str, actuators: Resolved) -> None:
    """Raise unless every selected actuator is a position servo: force = kp*ctrl - kp*q - kv*qdot."""
    model = env.sim.model

    def check() -> bool:
        for name, i in zip(actuators.names, _model_ids(env, actuators), strict=True):
            servo = (
                model.actuator_gaintype[i] == mujoco.mjtGain.mjGAIN_FIXED
                and model.actuator_biastype[i] == mujoco.mjtBias.mjBIAS_AFFINE
                and model.actuator_gainprm[i, 0] == -model.actuator_biasprm[i, 1]
                and model.actuator_biasprm[i, 0] == 0
            )
            if not servo:
                raise ConfigError(f"{term}: actuator {name!r} is not a position actuator (kp, kv)")
        return True

    _model_fact(env, ("position_actuators", term, tuple(actuators.names)), check)


def randomize_pd_gains(
    env: ManagerBasedRLEnv,
    env_ids: torch.Tensor,
    actuators: Resolved,
    kp_scale_range: tuple[float, float],
    kd_scale_range: tuple[float, float] = (1.0, 1.0),
    name: str = "pd_gains",
) -> None:
    """Position actuators: kp = nominal kp * U(kp_scale_range), kv = nominal kv * U(kd_scale_range),
    per env and actuator. MuJoCo's position actuator computes kp*ctrl + (0, -kp, -kv)·(1, q, qdot),
    so kp is written to actuator_gainprm[:, 0] and -kp to actuator_biasprm[:, 1] (they must agree, or
    the target is no longer ctrl), and -kv to actuator_biasprm[:, 2].
    Logged: "<name>/kp_scale" and "<name>/kd_scale", (num_envs, actuators) each.
    """
    term = "randomize_pd_gains"
    _require_kind(term, "actuators", actuators, "actuator")
    _check_range(term, "kp_scale_range", kp_scale_range, minimum=0.0)
    _check_range(term, "kd_scale_range", kd_scale_range, minimum=0.0)
    _position_actuators(env, term, actuators)
    shape = (selection.rows(env_ids), actuators.count)
    kp_scale = _toward_neutral(env, _sample(env, shape, kp_scale_range), 1.0)
    kd_scale = _toward_neutral(env, _sample(env, shape, kd_scale_range), 1.0)
    kp = _nominal(env, "actuator_gainprm", actuators.ids)[:, 0] * kp_scale
    bias = _nominal(env, "actuator_biasprm", actuators.ids)
    selection.put(env.sim.expand("actuator_gainprm"), env_ids, kp, actuators.ids, 0)
    biasprm = env.sim.expand("actuator_biasprm")
    selection.put(biasprm, env_ids, -kp, actuators.ids, 1)
    selection.put(biasprm, env_ids, bias[:, 2] * kd_scale, actuators.ids, 2)  # = -(nominal kv * scale)
    one = torch.ones((), device=env.device)
    _record(env, f"{name}/kp_scale", env_ids, kp_scale, one)
    _record(env, f"{name}/kd_scale", env_ids, kd_scale, one)


def randomize_motor_strength(
    env: ManagerBasedRLEnv,
    env_ids: torch.Tensor,
    actuators: Resolved,
    scale_range: tuple[float, float],
    name: str = "motor_strength",
) -> None:
    """Scale what each actuator can exert by U(scale_range), per env and actuator:

    - plain motors (no bias: force = gain * ctrl): actuator_gear *= scale, so both the joint torque
      per unit of action and its limit (gear * forcerange) scale, as a weaker or stronger motor;
    - servos (position/velocity actuators, which have a bias): actuator_forcerange *= scale, the
      saturation torque; below it the servo's gains are unchanged (randomize_pd_gains sets those).
      Such actuators must be force-limited (forcelimited="true"), else there is nothing to scale.

    Relative to the nominal values. Logged: (num_envs, actuators) scales.
    """
    term = "randomize_motor_strength"
    _require_kind(term, "actuators", actuators, "actuator")
    _check_range(term, "scale_range", scale_range, minimum=0.0)
    model = env.sim.model

    def classify() -> tuple[list[int], list[int]]:
        motor_cols: list[int] = []
        servo_cols: list[int] = []
        for col, (actuator, i) in enumerate(zip(actuators.names, _model_ids(env, actuators), strict=True)):
            if model.actuator_biastype[i] == mujoco.mjtBias.mjBIAS_NONE:
                motor_cols.append(col)
            elif model.actuator_forcelimited[i]:
                servo_cols.append(col)
            else:
                raise ConfigError(f"{term}: actuator {actuator!r} has a bias but no forcerange to scale")
        return motor_cols, servo_cols

    motor_cols, servo_cols = _model_fact(env, ("motor_strength", tuple(actuators.names)), classify)
    scale = _toward_neutral(env, _sample(env, (selection.rows(env_ids), actuators.count), scale_range), 1.0)
    # which columns are motors, on the device (a tensor of the host lists would be a copy per call)
    is_motor = env.scene.model_field("actuator_biastype")[actuators.ids] == int(mujoco.mjtBias.mjBIAS_NONE)
    for field, cols, use in (("actuator_gear", motor_cols, is_motor), ("actuator_forcerange", servo_cols, ~is_motor)):
        if not cols:
            continue
        values = _nominal(env, field, actuators.ids) * scale[:, :, None]
        current = selection.take(env.sim.expand(field), env_ids, actuators.ids)
        selection.put(env.sim.expand(field), env_ids, torch.where(use[:, None], values, current), actuators.ids)
    if motor_cols:
        env.sim.set_const(env_ids)  # actuator_acc0 and actuator_length0 depend on the gear
    _record(env, name, env_ids, scale, torch.ones((), device=env.device))


def randomize_action_delay(
    env: ManagerBasedRLEnv,
    env_ids: torch.Tensor,
    delay_range: tuple[int, int],
    name: str = "action_delay",
) -> None:
    """Actuator latency: env i's actuators receive the action from `delay` control steps ago, delay
    drawn uniformly from the integers low..high (inclusive), per env. Sets
    `env.action_manager.delay[env_ids]`; high must not exceed the action terms' max_delay_steps
    (the history the action manager keeps). Logged: (num_envs,) delays in control steps."""
    term = "randomize_action_delay"
    low, high = int(delay_range[0]), int(delay_range[1])
    if (low, high) != tuple(delay_range) or not 0 <= low <= high:
        raise ConfigError(f"{term}: delay_range needs integers 0 <= low <= high, got {tuple(delay_range)}")
    max_delay = env.action_manager.max_delay
    if high > max_delay:
        raise ConfigError(
            f"{term}: delay_range high {high} exceeds the action history ({max_delay} steps); "
            "set max_delay_steps on the action term(s)"
        )
    n = selection.rows(env_ids)
    delay = torch.randint(low, high + 1, (n,), generator=env.generator, device=env.device)
    strength = _strength(env)
    if strength is not None:  # a curriculum's strength s: each env keeps its delay with probability s
        kept = torch.rand(n, generator=env.generator, device=env.device) < strength
        delay = torch.where(kept, delay, torch.zeros_like(delay))
    selection.put(env.action_manager.delay, env_ids, delay)
    _record(env, name, env_ids, delay, torch.zeros((), dtype=torch.long, device=env.device))


def randomize_action_noise(
    env: ManagerBasedRLEnv,
    env_ids: torch.Tensor,
    bias_range: tuple[float, float],
    noise_std_range: tuple[float, float],
    name: str = "action_noise",
) -> None:
    """Imperfect actuation (Dactyl's action noise): the actuators receive action + bias + std * N(0, 1)
    (action units, before the action term's scale), the bias drawn per env and action dimension,
    std per env, both per episode; the noise is drawn at every control step. The policy's
    observations keep the action it chose. Logged: "<name>/bias" (num_envs, actions) and
    "<name>/std" (num_envs, 1)."""
    term = "randomize_action_noise"
    _check_range(term, "bias_range", bias_range)
    _check_range(term, "noise_std_range", noise_std_range, minimum=0.0)
    manager = env.action_manager
    if manager.action_bias is None or manager.action_noise_std is None:
        manager.action_bias = torch.zeros_like(manager.action)
        manager.action_noise_std = torch.zeros(env.num_envs, 1, device=env.device)
    n = selection.rows(env_ids)
    bias = _toward_neutral(env, _sample(env, (n, manager.action_dim), bias_range).float(), 0.0)
    std = _toward_neutral(env, _sample(env, (n, 1), noise_std_range).float(), 0.0)
    selection.put(manager.action_bias, env_ids, bias)
    selection.put(manager.action_noise_std, env_ids, std)
    zero = torch.zeros((), device=env.device)
    _record(env, f"{name}/bias", env_ids, bias, zero)
    _record(env, f"{name}/std", env_ids, std, zero)


def randomize_joint_damping(
    env: ManagerBasedRLEnv,
    env_ids: torch.Tensor,
    joints: Resolved,
    scale_range: tuple[float, float],
    name: str = "joint_damping",
) -> None:
    """dof_damping = nominal * U(scale_range), per env and joint (passive joint damping, not the
    servo's kv). Logged: (num_envs, joints) scales."""
    term = "randomize_joint_damping"
    _require_kind(term, "joints", joints, "joint")
    _check_range(term, "scale_range", scale_range, minimum=0.0)
    scale = _toward_neutral(env, _sample(env, (selection.rows(env_ids), joints.count), scale_range), 1.0)
    damping = _nominal(env, "dof_damping", joints.dof_adr) * scale
    selection.put(env.sim.expand("dof_damping"), env_ids, damping, joints.dof_adr)
    _record(env, name, env_ids, scale, torch.ones((), device=env.device))


def randomize_gravity_force(
    env: ManagerBasedRLEnv,
    env_ids: torch.Tensor,
    bodies: Resolved,
    std: float,
    name: str = "gravity_noise",
) -> None:
    """Gravity noise on free objects: a constant world-frame force m * dg on each selected body for
    the episode, dg ~ N(0, std^2) m/s^2 per axis (MuJoCo's gravity is one global option, so a
    per-env gravity change is applied as the force it would add to the object). Logged:
    (num_envs, bodies, 3) dg."""
    term = "randomize_gravity_force"
    _require_kind(term, "bodies", bodies, "body")
    if not std >= 0.0:
        raise ConfigError(f"{term}: std must be >= 0, got {std}")
    n = selection.rows(env_ids)
    dg = (torch.randn(n, bodies.count, 3, generator=env.generator, device=env.device) * std).to(env.sim.dtype)
    dg = _toward_neutral(env, dg, 0.0)
    mass = selection.take(env.sim.expand("body_mass"), env_ids, bodies.ids) if env.sim.is_expanded("body_mass") else (
        _nominal(env, "body_mass", bodies.ids).expand(n, -1))
    force = dg * mass[..., None]
    selection.put(env.sim.xfrc_applied, env_ids, force, bodies.ids, slice(0, 3))
    _record(env, name, env_ids, dg, torch.zeros((), device=env.device))
