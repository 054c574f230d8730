"""Swing-leg trajectories and their tracking.

A swing goes from the lift-off point p0 to the target foothold p1 as progress s runs over [0, 1]:

    xy(s) = p0 + (p1 − p0) b(w(s)),            b(s) = 3s² − 2s³   (the cubic Bézier p0, p0, p1, p1)
    z(s)  = z0 + (z1 − z0) b(s) + h c(s),      c(s) = 16 s² (1 − s)²,  h = apex + |z1 − z0| / 2
    w(s)  = clamp((s − δ) / (1 − 2δ), 0, 1)    (δ = `margin`)

so the foot leaves and lands with zero velocity, lifts before and lands after it moves sideways
(no dragging over the ground for the first and last δ of the swing), and at s = ½ it is `apex`
above the higher of its two end points (w(½) = ½, b(½) = ½, c(½) = 1). The Cartesian PD force F = Kp (p_ref − p) + Kd (v_ref − v)
becomes joint torques through τ = Jᵀ F.
"""

from __future__ import annotations

import torch


def swing_trajectory(
    start: torch.Tensor, target: torch.Tensor, apex: float | torch.Tensor, s: torch.Tensor, margin: float = 0.1
) -> tuple[torch.Tensor, torch.Tensor]:
    """Reference position and its derivative w.r.t. s.

    start, target: (..., 3) lift-off point and foothold, m; apex: clearance above the higher end
    point at s = ½, m; s: (...) progress in [0, 1]; margin: δ in [0, ½), the share of the swing at
    each end in which the foot moves only vertically. Returns (position (..., 3) m, dposition/ds
    (..., 3) m per unit progress).
    """
    s = s[..., None]
    warp = ((s - margin) / (1.0 - 2.0 * margin)).clamp(0.0, 1.0)
    inside = ((s > margin) & (s < 1.0 - margin)).to(s.dtype)
    blend_xy = warp * warp * (3.0 - 2.0 * warp)
    blend_xy_ds = 6.0 * warp * (1.0 - warp) * inside / (1.0 - 2.0 * margin)
    blend_z = s * s * (3.0 - 2.0 * s)
    blend_z_ds = 6.0 * s * (1.0 - s)
    bump = 16.0 * (s * (1.0 - s)) ** 2
    bump_ds = 32.0 * s * (1.0 - s) * (1.0 - 2.0 * s)
    delta = target - start
    height = apex + 0.5 * delta[..., 2:3].abs()
    xy = start[..., 0:2] + delta[..., 0:2] * blend_xy
    z = start[..., 2:3] + delta[..., 2:3] * blend_z + height * bump
    position = torch.cat((xy, z), dim=-1)
    velocity = torch.cat((delta[..., 0:2] * blend_xy_ds, delta[..., 2:3] * blend_z_ds + height * bump_ds), dim=-1)
    return position, velocity


def cartesian_pd(
    position: torch.Tensor,
    velocity: torch.Tensor,
    position_ref: torch.Tensor,
    velocity_ref: torch.Tensor,
    kp: torch.Tensor,
    kd: torch.Tensor,
) -> torch.Tensor:
    """F = Kp (p_ref − p) + Kd (v_ref − v); (..., 3) each, gains (3,) N/m and N·s/m -> (..., 3) N."""
    return kp * (position_ref - position) + kd * (velocity_ref - velocity)
