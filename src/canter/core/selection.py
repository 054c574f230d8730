"""Env selections: which envs a lifecycle call (reset, command resampling, interval event, curriculum)
applies to, without reading the device on the host.

A selection `sel` is a torch tensor of one of two kinds:

- a (k,) long tensor of env indices: the cpu backend's form (MuJoCo C resets named rows on the host,
  so knowing them costs nothing there). Terms draw k values and write k rows.
- a (num_envs,) bool mask: the form of a device-resident backend (warp). Terms draw values for every
  env and write them only where the mask is set, so no op's size depends on the data and the step
  never synchronizes with the host (nonzero() would, and would break CUDA-graph capture).

Terms stay one function for both kinds by drawing `rows(sel)` values and using `take`/`put`/`fill`;
`put(x, sel, v, cols)` is `x[sel, cols] = v` for ids and a blend that keeps the unselected rows for a
mask. Per-reset log values are `mean(x, sel)`: NaN when nothing is selected, which the runner skips.
"""

from __future__ import annotations

from typing import Any

import torch


def as_slice(indices: list[int]) -> slice | None:
    """The slice equal to a list of consecutive indices (indexing with it gives zero-copy views), or
    None (the list is empty or not consecutive)."""
    if indices and indices == list(range(indices[0], indices[0] + len(indices))):
        return slice(indices[0], indices[-1] + 1)
    return None


def is_mask(sel: torch.Tensor) -> bool:
    """Whether `sel` is a (num_envs,) bool mask (else a (k,) tensor of env indices)."""
    return sel.dtype == torch.bool


def rows(sel: torch.Tensor) -> int:
    """How many rows of values a term draws for `sel`: k for indices, num_envs for a mask (values for
    the unselected envs are drawn and dropped, so the draw's size never depends on the data)."""
    return sel.shape[0]


def row_index(sel: torch.Tensor) -> torch.Tensor | slice:
    """The index of the rows a term computes for: the indices, or every row for a mask."""
    return slice(None) if is_mask(sel) else sel


def _full_index(sel: torch.Tensor, index: tuple[Any, ...]) -> tuple[Any, ...]:
    if is_mask(sel):
        return (slice(None), *index)
    # with a tensor among the trailing indices, each selected row pairs with all of its entries
    paired = any(isinstance(i, torch.Tensor) for i in index)
    return (sel[:, None] if paired else sel, *index)


def take(x: torch.Tensor, sel: torch.Tensor, *index: Any) -> torch.Tensor:
    """x[sel, *index] for indices; x[:, *index] (every env) for a mask. A 1-d tensor in `index` picks
    columns for every selected row: take(x, sel, cols) has shape (rows(sel), len(cols), ...)."""
    return x[_full_index(sel, index)]


def put(x: torch.Tensor, sel: torch.Tensor, values: torch.Tensor, *index: Any) -> None:
    """x[sel, *index] = values in place, with `values` shaped like take(x, sel, *index); for a mask the
    unselected rows keep their contents."""
    full = _full_index(sel, index)
    if is_mask(sel):
        old = x[full]
        values = torch.where(sel.view(-1, *([1] * (old.dim() - 1))), values.to(old.dtype), old)
    x[full] = values.to(x.dtype)


def fill(x: torch.Tensor, sel: torch.Tensor, value: float | bool, dim: int = 0) -> None:
    """Set the selected envs' entries along `dim` (the env dimension of `x`) to `value`, in place."""
    if is_mask(sel):
        shape = [1] * x.dim()
        shape[dim] = -1
        x.masked_fill_(sel.view(shape), value)
    else:
        x.index_fill_(dim, sel, value)


def mean(x: torch.Tensor, sel: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """Mean of `x` over the selected envs along its env dimension `dim` (float); NaN when none is
    selected (a log value the runner skips for that step)."""
    x = x.float()
    if not is_mask(sel):
        return x.index_select(dim, sel).mean(dim=dim)
    shape = [1] * x.dim()
    shape[dim] = -1
    weights = sel.view(shape).float()
    return (x * weights).sum(dim=dim) / sel.sum()


def count(sel: torch.Tensor) -> torch.Tensor:
    """() int64: how many envs are selected (on the device)."""
    return sel.sum() if is_mask(sel) else torch.full((), sel.numel(), dtype=torch.int64, device=sel.device)


def to_ids(sel: torch.Tensor) -> torch.Tensor:
    """The env indices of a selection, for host-side consumers (the cpu backend's MuJoCo calls): a
    mask is turned into indices here, which on a device would synchronize."""
    return sel.nonzero().squeeze(1) if is_mask(sel) else sel


def to_mask(sel: torch.Tensor, num_envs: int) -> torch.Tensor:
    """The (num_envs,) bool mask of a selection."""
    if is_mask(sel):
        return sel
    return torch.zeros(num_envs, dtype=torch.bool, device=sel.device).index_fill_(0, sel, True)
