"""Batched rotation helpers. Quaternions are (..., 4) in MuJoCo's (w, x, y, z) order."""

from __future__ import annotations

import math

import torch


def quat_rotate(quat: torch.Tensor, vec: torch.Tensor) -> torch.Tensor:
    """Rotate vectors (..., 3) from the body frame to the world frame by unit quaternions (..., 4)."""
    w = quat[..., :1]
    xyz = quat[..., 1:]
    # v' = v + 2 w (q x v) + 2 q x (q x v)
    t = 2.0 * torch.cross(xyz, vec, dim=-1)
    return vec + w * t + torch.cross(xyz, t, dim=-1)


def quat_rotate_inverse(quat: torch.Tensor, vec: torch.Tensor) -> torch.Tensor:
    """Rotate world-frame vectors (..., 3) into the body frame of unit quaternions (..., 4)."""
    w = quat[..., :1]
    xyz = quat[..., 1:]
    # the inverse rotation uses the conjugate (w, -xyz)
    t = 2.0 * torch.cross(xyz, vec, dim=-1)
    return vec - w * t + torch.cross(xyz, t, dim=-1)


def quat_mul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Hamilton product a * b of quaternions (..., 4)."""
    aw, ax, ay, az = a.unbind(-1)
    bw, bx, by, bz = b.unbind(-1)
    return torch.stack(
        (
            aw * bw - ax * bx - ay * by - az * bz,
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
        ),
        dim=-1,
    )


def quat_from_yaw(yaw: torch.Tensor) -> torch.Tensor:
    """Quaternions (..., 4) of rotations by `yaw` radians about the world z axis."""
    half = 0.5 * yaw
    zeros = torch.zeros_like(half)
    return torch.stack((torch.cos(half), zeros, zeros, torch.sin(half)), dim=-1)


def yaw_from_quat(quat: torch.Tensor) -> torch.Tensor:
    """Heading angle (...,) in radians of quaternions (..., 4): atan2 of the rotated x axis."""
    w, x, y, z = quat.unbind(-1)
    return torch.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))


def wrap_to_pi(angle: torch.Tensor) -> torch.Tensor:
    """Angles wrapped into [-pi, pi)."""
    return torch.remainder(angle + math.pi, 2.0 * math.pi) - math.pi
