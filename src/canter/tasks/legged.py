"""Pieces shared by the legged tasks (the dog, the humanoid)."""

from __future__ import annotations

from canter import mdp
from canter.envs.env_cfg import EnvCfg
from canter.managers.event import EventTermCfg
from canter.scene.entity import Sel, actuators, bodies


def add_domain_randomization(
    cfg: EnvCfg,
    *,
    foot_geoms: Sel,
    base_body: str,
    mass_range: tuple[float, float],
    max_delay_steps: int = 2,
) -> None:
    """Seed 004's list, sampled per episode at reset: foot friction, base mass (kg added) and CoM,
    inertia, PD gains, motor strength, actuator latency (0..max_delay_steps control steps); sensor
    noise is in the observation terms, pushes are interval events."""
    cfg.actions["joint_pos"].max_delay_steps = max_delay_steps
    base = bodies(base_body)
    reset = {
        "foot_friction": (mdp.randomize_friction, {"geoms": foot_geoms, "friction_range": (0.4, 1.25)}),
        f"{base_body}_mass": (mdp.randomize_added_mass, {"bodies": base, "mass_range": mass_range}),
        f"{base_body}_com": (mdp.randomize_com_offset, {"bodies": base, "offset_range": (-0.02, 0.02)}),
        "inertia": (mdp.randomize_inertia_scale, {"bodies": bodies(".*"), "scale_range": (0.9, 1.1)}),
        "pd_gains": (mdp.randomize_pd_gains, {"actuators": actuators(), "kp_scale_range": (0.9, 1.1), "kd_scale_range": (0.8, 1.2)}),
        "motor_strength": (mdp.randomize_motor_strength, {"actuators": actuators(), "scale_range": (0.9, 1.1)}),
        "action_delay": (mdp.randomize_action_delay, {"delay_range": (0, max_delay_steps)}),
    }
    for name, (func, params) in reset.items():
        cfg.events[name] = EventTermCfg(func=func, mode="reset", params=params)
