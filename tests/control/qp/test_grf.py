"""The ground-reaction-force QP: structure, and forces that produce the desired wrench."""

from __future__ import annotations

import torch

from canter.control.qp import QPStatus, grf_problem, solve


def test_shapes_rows_and_bounds():
    dt = torch.float64
    feet = torch.tensor([[0.2, 0.1, -0.3], [0.2, -0.1, -0.3], [-0.2, 0.1, -0.3], [-0.2, -0.1, -0.3]], dtype=dt)
    contact = torch.tensor([[True, False, False, True]])
    P, q, A, l, u = grf_problem(feet[None], contact, torch.zeros(1, 6, dtype=dt), mu=0.5, fz_min=5.0, fz_max=150.0)
    assert P.shape == (1, 12, 12) and q.shape == (1, 12) and A.shape == (1, 20, 12) and u.shape == (1, 20)
    assert torch.allclose(P, P.transpose(1, 2), atol=1e-12) and (torch.linalg.eigvalsh(P) > 0).all()
    inf = float("inf")
    stance_l = torch.tensor([5.0, -inf, 0.0, -inf, 0.0], dtype=dt)
    stance_u = torch.tensor([150.0, 0.0, inf, 0.0, inf], dtype=dt)
    for foot, down in enumerate(contact[0].tolist()):
        rows = slice(5 * foot, 5 * foot + 5)
        assert torch.equal(l[0, rows], stance_l if down else torch.zeros(5, dtype=dt))
        assert torch.equal(u[0, rows], stance_u if down else torch.zeros(5, dtype=dt))
    # foot 1's rows: fz; fx − μfz; fx + μfz; fy − μfz; fy + μfz on its variables 3, 4, 5
    expected = torch.tensor([[0, 0, 1], [1, 0, -0.5], [1, 0, 0.5], [0, 1, -0.5], [0, 1, 0.5]], dtype=dt)
    assert torch.equal(A[0, 5:10, 3:6], expected)
    assert A[0, 5:10, :3].abs().sum() == 0 and A[0, 5:10, 6:].abs().sum() == 0


def test_forces_track_a_reachable_wrench_and_respect_the_pyramid():
    dt = torch.float64
    feet = torch.tensor([[[0.2, 0.1, -0.3], [0.2, -0.1, -0.3], [-0.2, 0.1, -0.3], [-0.2, -0.1, -0.3]]], dtype=dt)
    feet = feet.repeat(3, 1, 1)
    contact = torch.tensor([[1, 1, 1, 1], [1, 0, 0, 1], [1, 1, 1, 1]], dtype=torch.bool)
    wrench = torch.tensor([[0, 0, 120.0, 0, 0, 0], [0, 0, 120.0, 0, 0, 0], [200.0, 0, 100.0, 0, 0, 0]], dtype=dt)
    P, q, A, l, u = grf_problem(feet, contact, wrench, mu=0.5, fz_max=150.0, force_reg=1e-6)
    x, info = solve(P, q, A, l, u)
    assert (info.status == QPStatus.SOLVED).all()
    f = x.reshape(3, 4, 3)
    # a standing robot: every stance foot carries a quarter of the weight, no shear
    assert torch.allclose(f[0, :, 2], torch.full((4,), 30.0, dtype=dt), atol=1e-3)
    assert f[0, :, :2].abs().max() < 1e-3
    # a diagonal pair through the CoM carries everything, the swing feet nothing
    assert f[1, [1, 2]].abs().max() < 1e-6
    assert torch.allclose(f[1, [0, 3], 2], torch.full((2,), 60.0, dtype=dt), atol=1e-3)
    # 200 N sideways on 100 N of weight cannot be produced with μ = 0.5: the pyramid caps it
    assert f[2, :, 0].sum() <= 0.5 * f[2, :, 2].sum() + 1e-5
    assert torch.allclose(f[2, :, 0].sum(), 0.5 * f[2, :, 2].sum(), atol=1e-3)
