"""Env selections: indices and masks give the same writes to the selected rows and leave the others
alone; per-reset means skip steps without resets (NaN)."""

from __future__ import annotations

import math

import torch

from canter.core import selection
from canter.core.syncguard import HostSyncGuard

IDS = torch.tensor([1, 3])
MASK = torch.tensor([False, True, False, True, False])


def _grid() -> torch.Tensor:
    return torch.arange(5 * 4 * 3, dtype=torch.float32).view(5, 4, 3)


def test_rows_and_take():
    x = _grid()
    assert selection.rows(IDS) == 2 and selection.rows(MASK) == 5
    cols = torch.tensor([0, 2])
    assert torch.equal(selection.take(x, IDS, cols), x[IDS][:, cols])
    assert torch.equal(selection.take(x, MASK, cols), x[:, cols])
    assert torch.equal(selection.take(x, IDS, slice(1, 3), 2), x[IDS, 1:3, 2])
    assert selection.take(x, MASK, 2, 0).shape == (5,)


def test_put_with_indices_and_with_a_mask_writes_the_same_rows():
    cols = torch.tensor([3, 0])
    by_ids, by_mask = _grid(), _grid()
    selection.put(by_ids, IDS, -torch.ones(2, 2, 2), cols, slice(0, 2))
    # the mask form computes every row and keeps only the selected ones
    values = -torch.ones(5, 2, 2)
    values[0] = 99.0
    selection.put(by_mask, MASK, values, cols, slice(0, 2))
    assert torch.equal(by_ids, by_mask)
    expected = _grid()
    expected[1, 3, :2] = expected[1, 0, :2] = expected[3, 3, :2] = expected[3, 0, :2] = -1.0
    assert torch.equal(by_ids, expected)
    # an int column and a whole row
    a, b = _grid(), _grid()
    selection.put(a, IDS, torch.zeros(2, 3), 2)
    selection.put(b, MASK, torch.zeros(5, 3), 2)
    assert torch.equal(a, b) and a[1, 2].abs().sum() == 0 and a[0, 2].abs().sum() > 0


def test_fill_along_the_env_dimension():
    a, b = torch.ones(3, 5), torch.ones(3, 5)
    selection.fill(a, IDS, 0.0, dim=1)
    selection.fill(b, MASK, 0.0, dim=1)
    assert torch.equal(a, b) and a.sum() == 9.0


def test_mean_over_the_selected_envs_and_nan_for_none():
    x = torch.tensor([[1.0, 2.0, 3.0, 4.0, 5.0], [0.0, 10.0, 0.0, 30.0, 0.0]])
    assert torch.equal(selection.mean(x, IDS, dim=1), torch.tensor([3.0, 20.0]))
    assert torch.equal(selection.mean(x, MASK, dim=1), torch.tensor([3.0, 20.0]))
    assert all(math.isnan(v) for v in selection.mean(x, torch.zeros(5, dtype=torch.bool), dim=1).tolist())
    assert int(selection.count(MASK)) == int(selection.count(IDS)) == 2
    assert torch.equal(selection.to_ids(MASK), IDS) and torch.equal(selection.to_mask(IDS, 5), MASK)


def test_the_mask_form_never_reads_the_device():
    x, cols = _grid(), torch.tensor([0, 1])
    with HostSyncGuard("error"):
        selection.put(x, MASK, torch.zeros(5, 2, 3), cols)
        selection.fill(x, MASK, 1.0)
        selection.mean(x, MASK, dim=0)
        selection.take(x, MASK, 0)
