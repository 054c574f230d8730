"""Rotation helpers against hand-computed values."""

from __future__ import annotations

import math

import torch

from canter.core.math import (
    quat_from_yaw,
    quat_mul,
    quat_rotate,
    quat_rotate_inverse,
    wrap_to_pi,
    yaw_from_quat,
)


def test_quarter_turn_about_z_maps_x_to_y():
    q = quat_from_yaw(torch.tensor([math.pi / 2]))
    torch.testing.assert_close(
        quat_rotate(q, torch.tensor([[1.0, 0.0, 0.0]])), torch.tensor([[0.0, 1.0, 0.0]])
    )
    torch.testing.assert_close(
        quat_rotate_inverse(q, torch.tensor([[0.0, 1.0, 0.0]])), torch.tensor([[1.0, 0.0, 0.0]])
    )


def test_inverse_undoes_rotation_and_products_compose():
    g = torch.Generator().manual_seed(0)
    q = torch.randn(64, 4, generator=g, dtype=torch.float64)
    q = q / q.norm(dim=1, keepdim=True)
    v = torch.randn(64, 3, generator=g, dtype=torch.float64)
    torch.testing.assert_close(quat_rotate_inverse(q, quat_rotate(q, v)), v)
    r = torch.randn(64, 4, generator=g, dtype=torch.float64)
    r = r / r.norm(dim=1, keepdim=True)
    torch.testing.assert_close(quat_rotate(quat_mul(q, r), v), quat_rotate(q, quat_rotate(r, v)))


def test_yaw_roundtrip_and_wrap():
    yaw = torch.tensor([-3.0, -1.0, 0.0, 0.5, 3.0])
    torch.testing.assert_close(yaw_from_quat(quat_from_yaw(yaw)), yaw)
    torch.testing.assert_close(
        wrap_to_pi(torch.tensor([3 * math.pi / 2, -3 * math.pi / 2])),
        torch.tensor([-math.pi / 2, math.pi / 2]),
    )
