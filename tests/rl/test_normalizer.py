from __future__ import annotations

import numpy as np
import torch

from canter.core.rng import make_generator
from canter.rl.normalizer import EmpiricalNormalizer


def test_running_statistics_equal_numpy_over_all_batches():
    generator = make_generator(3, "cpu")
    normalizer = EmpiricalNormalizer((3,), clip=None)
    batches = [
        torch.randn(size, 3, generator=generator) * torch.tensor([1.0, 5.0, 0.1])
        + torch.tensor([2.0, -1.0, 7.0])
        for size in (1, 7, 64, 5, 300)
    ]
    seen = []
    for batch in batches:
        normalizer.update(batch)
        seen.append(batch.numpy())
        everything = np.concatenate(seen).astype(np.float64)
        np.testing.assert_allclose(normalizer.mean.numpy(), everything.mean(axis=0), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(normalizer.var.numpy(), everything.var(axis=0), rtol=1e-4, atol=1e-6)
        assert int(normalizer.count) == everything.shape[0]


def test_update_only_in_training_mode_and_buffers_in_state_dict():
    normalizer = EmpiricalNormalizer((2,))
    normalizer.update(torch.tensor([[1.0, 2.0], [3.0, 4.0]]))
    normalizer.eval()
    normalizer.update(torch.tensor([[100.0, 100.0]]))
    assert torch.equal(normalizer.mean, torch.tensor([2.0, 3.0]))
    assert torch.equal(normalizer.var, torch.tensor([1.0, 1.0]))
    state = normalizer.state_dict()
    assert set(state) == {"mean", "var", "count"}
    restored = EmpiricalNormalizer((2,))
    restored.load_state_dict(state)
    assert torch.equal(restored.mean, normalizer.mean) and int(restored.count) == 2


def test_normalize_clip_and_exported_affine_reproduce_forward():
    normalizer = EmpiricalNormalizer((2,), epsilon=1e-4, clip=3.0)
    normalizer.update(torch.tensor([[0.0, 10.0], [2.0, 10.0]]))  # mean (1, 10), var (1, 0)
    x = torch.tensor([[3.0, 10.0], [1.0, 10.1]])
    # (3-1)/√(1+1e-4) ≈ 1.9999; (10.1-10)/√1e-4 = 10 → clipped to 3
    torch.testing.assert_close(normalizer(x), torch.tensor([[2.0 / (1.0001**0.5), 0.0], [0.0, 3.0]]))
    mean, std = normalizer.export_affine()
    torch.testing.assert_close(((x - mean) / std).clamp(-3.0, 3.0), normalizer(x))
