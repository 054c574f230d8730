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


def quat_conjugate(quat: torch.Tensor) -> torch.Tensor:
    """(w, -x, -y, -z): the inverse of a unit quaternion."""
    return torch.cat((quat[..., :1], -quat[..., 1:]), dim=-1)


def rotation_distance(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """The angle (...,) in [0, pi] radians of the rotation taking unit quaternion b to a:
    2 asin(|vec(a * conj(b))|), the same for q and -q."""
    diff = quat_mul(a, quat_conjugate(b))
    return 2.0 * torch.asin(torch.linalg.vector_norm(diff[..., 1:], dim=-1).clamp(max=1.0))


def resting_pose(quat: torch.Tensor) -> torch.Tensor:
    """(..., 4) the orientation of a box (any body whose faces are normal to its frame's axes)
    resting on its face nearest to the ground: the body axis closest to the world's vertical (either
    sign) turned straight up by the smallest rotation (a swing about a horizontal axis). The identity
    for an upright box."""
    up = torch.zeros((*quat.shape[:-1], 3), dtype=quat.dtype, device=quat.device)
    up[..., 2] = 1.0
    local = quat_rotate_inverse(quat, up)  # the vertical in the body frame: each axis's z component
    nearest = torch.nn.functional.one_hot(local.abs().argmax(dim=-1), 3).to(quat.dtype)
    face = quat_rotate(quat, nearest * torch.sign((local * nearest).sum(dim=-1, keepdim=True)))
    # the half-way quaternion from `face` to up: (1 + face . up, face x up), normalized (face . up >= 1/sqrt(3))
    swing = torch.cat((1.0 + face[..., 2:], torch.cross(face, up, dim=-1)), dim=-1)
    return quat_mul(swing / torch.linalg.vector_norm(swing, dim=-1, keepdim=True), quat)


def random_quat(count: int, generator: torch.Generator, device: torch.device) -> torch.Tensor:
    """(count, 4) rotations uniform over SO(3) (Shoemake's subgroup algorithm), w >= 0."""
    u1, u2, u3 = torch.rand(3, count, generator=generator, device=device)
    a, b = torch.sqrt(1.0 - u1), torch.sqrt(u1)
    quat = torch.stack((a * torch.sin(2 * math.pi * u2), a * torch.cos(2 * math.pi * u2),
                        b * torch.sin(2 * math.pi * u3), b * torch.cos(2 * math.pi * u3)), dim=-1)
    # (x, y, z, w) of Shoemake's form reordered to (w, x, y, z), then one hemisphere (a roll, not a
    # list index: that would copy the index to the device on every call)
    quat = torch.roll(quat, 1, dims=1)
    return torch.where(quat[:, :1] < 0, -quat, quat)
