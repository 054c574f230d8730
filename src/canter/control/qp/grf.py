"""The ground-reaction-force QP of a quadruped's stance feet, built for a whole batch at once.

Variables: f (B, 12) = the contact forces of the 4 feet, (fx, fy, fz) per foot in newtons, in a
world-aligned frame (z up), foot order as given. The objective tracks a desired wrench about the
centre of mass in least squares, with a small force regularization:

    minimize ½ (G f − w)ᵀ W (G f − w) + ½ α fᵀf,   G = [I₃ … I₃ ; [r₁]× … [r₄]×]  (6 × 12)

so P = Gᵀ W G + α I and q = −Gᵀ W w. Constraints, 5 rows per foot (20 rows, foot-major):

    row 0:  fz_min ≤ fz ≤ fz_max
    row 1:  fx − μ fz ≤ 0        row 2:  fx + μ fz ≥ 0      (linearized friction pyramid)
    row 3:  fy − μ fz ≤ 0        row 4:  fy + μ fz ≥ 0

A swing foot (contact False) gets all five rows as equalities to 0, which forces its three
components to zero.
"""

from __future__ import annotations

import torch

ROWS_PER_FOOT = 5


def _skew(r: torch.Tensor) -> torch.Tensor:
    """(..., 3) → (..., 3, 3) cross-product matrices: skew(r) @ f = r × f."""
    zero = torch.zeros_like(r[..., 0])
    x, y, z = r.unbind(-1)
    return torch.stack(
        (torch.stack((zero, -z, y), -1), torch.stack((z, zero, -x), -1), torch.stack((-y, x, zero), -1)), -2
    )


def grf_problem(
    foot_pos_rel: torch.Tensor,
    contact: torch.Tensor,
    wrench_des: torch.Tensor,
    *,
    mu: float | torch.Tensor = 0.6,
    fz_min: float | torch.Tensor = 0.0,
    fz_max: float | torch.Tensor = 200.0,
    wrench_weight: torch.Tensor | None = None,
    force_reg: float = 1e-4,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Build the batched GRF QP (P, q, A, l, u) for `canter.control.qp.solve`.

    Args:
        foot_pos_rel: (B, 4, 3) foot positions minus the CoM position, world-aligned frame (m).
        contact: (B, 4) bool, True for a stance foot.
        wrench_des: (B, 6) desired total contact wrench about the CoM: force (N) then torque (N·m),
            world-aligned frame. For single-rigid-body dynamics this is
            [m (a_des − g); I_w ω̇_des + ω × I_w ω].
        mu: friction coefficient, a float or (B,). With a float, A is one (20, 12) matrix expanded
            over the batch (a read-only view), which `solve` turns into GEMMs.
        fz_min, fz_max: normal force bounds of a stance foot (N), floats or (B,).
        wrench_weight: (6,) or (B, 6) diagonal of W; default 1 for forces, 10 for torques.
        force_reg: α, the weight of ½‖f‖² (1/N² relative to W).

    Returns:
        P (B, 12, 12), q (B, 12), A (B, 20, 12), l (B, 20), u (B, 20), in the dtype and device of
        `foot_pos_rel`.
    """
    batch, dtype, device = foot_pos_rel.shape[0], foot_pos_rel.dtype, foot_pos_rel.device
    eye3 = torch.eye(3, dtype=dtype, device=device).expand(batch, 4, 3, 3)
    # G = [I … I ; skew(r_1) … skew(r_4)]: (B, 6, 12)
    G = torch.cat((eye3, _skew(foot_pos_rel)), dim=-2).permute(0, 2, 1, 3).reshape(batch, 6, 12)
    if wrench_weight is None:
        wrench_weight = torch.tensor([1.0, 1.0, 1.0, 10.0, 10.0, 10.0], dtype=dtype, device=device)
    weight = wrench_weight.to(dtype=dtype, device=device).expand(batch, 6)
    GtW = G.transpose(1, 2) * weight[:, None, :]
    P = GtW @ G + force_reg * torch.eye(12, dtype=dtype, device=device)
    q = -(GtW @ wrench_des.to(dtype)[..., None])[..., 0]

    A = _constraint_rows(mu, batch, dtype, device)
    inf = torch.full((batch,), float("inf"), dtype=dtype, device=device)
    lo = _full(fz_min, batch, dtype, device)
    hi = _full(fz_max, batch, dtype, device)
    zero = torch.zeros_like(inf)
    l_foot = torch.stack((lo, -inf, zero, -inf, zero), -1)  # (B, 5)
    u_foot = torch.stack((hi, zero, inf, zero, inf), -1)
    stance = contact.to(torch.bool)[..., None]  # (B, 4, 1)
    l = torch.where(stance, l_foot[:, None, :], 0.0).reshape(batch, 4 * ROWS_PER_FOOT)
    u = torch.where(stance, u_foot[:, None, :], 0.0).reshape(batch, 4 * ROWS_PER_FOOT)
    return P, q, A, l, u


def _full(value: float | torch.Tensor, count: int, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """(count,) of a number (a device-side fill, no copy from the host) or of a tensor (moved, expanded)."""
    if isinstance(value, torch.Tensor):
        return value.to(dtype=dtype, device=device).expand(count)
    return torch.full((count,), float(value), dtype=dtype, device=device)


def _constraint_rows(mu: float | torch.Tensor, batch: int, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """(B, 20, 12) rows of the five constraints per foot; an expanded (shared) view for a float μ."""
    per_problem = isinstance(mu, torch.Tensor) and mu.ndim > 0
    count = batch if per_problem else 1
    mu_t = _full(mu, count, dtype, device)
    block = torch.zeros(count, ROWS_PER_FOOT, 3, dtype=dtype, device=device)
    block[:, 0, 2] = 1.0
    block[:, 1, 0] = block[:, 2, 0] = block[:, 3, 1] = block[:, 4, 1] = 1.0
    block[:, 1, 2] = block[:, 3, 2] = -mu_t
    block[:, 2, 2] = block[:, 4, 2] = mu_t
    rows = _block_diag4(block)
    return rows if per_problem else rows.expand(batch, -1, -1)


def _block_diag4(block: torch.Tensor) -> torch.Tensor:
    """(B, r, c) → (B, 4r, 4c) with `block` repeated on the diagonal."""
    batch, rows, cols = block.shape
    out = block.new_zeros(batch, 4, rows, 4, cols)
    for foot in range(4):
        out[:, foot, :, foot, :] = block
    return out.reshape(batch, 4 * rows, 4 * cols)
