"""The CUDA graph of the env step (canter.envs.cuda_graph) off a GPU: the switch refuses what it cannot
do, and a step's outputs survive the trip through the graph's packed buffers. The graph itself is
tested against the eager step in tests/gpu; what makes a step capturable (no host syncs, one fixed
tensor program, carried state kept in place) is held for every task family in tests/core/test_syncguard.py."""

from __future__ import annotations

import pytest
import torch

from canter.core.errors import ConfigError
from canter.envs.cuda_graph import _PackedOutputs


def test_packed_outputs_give_back_every_tensor_with_its_dtype_and_shape():
    image = torch.randint(0, 255, (4, 1, 2, 2), dtype=torch.uint8)
    shared = torch.arange(4.0)
    tree = (
        {"policy": torch.randn(4, 3), "camera": image[:, :, :, ::2]},  # a strided view
        torch.randn(4), torch.tensor([True, False, True, False]), torch.zeros(4, dtype=torch.bool),
        {"log": {"reward": torch.tensor(1.5), "resets": torch.tensor(3)}, "same": shared, "again": shared, "n": 7},
    )
    packed = _PackedOutputs(tree)
    flats = packed.pack()
    assert sorted(str(f.dtype) for f in flats) == ["torch.bool", "torch.float32", "torch.int64", "torch.uint8"]
    assert sum(f.numel() for f in flats) == 12 + 8 + 4 + 8 + 1 + 1 + 4  # the shared tensor once
    out = packed.unpack([f.clone() for f in flats])
    assert out[4]["n"] == 7
    pairs = [(tree[0]["policy"], out[0]["policy"]), (tree[0]["camera"], out[0]["camera"]), (tree[1], out[1]),
             (tree[2], out[2]), (tree[3], out[3]), (tree[4]["log"]["reward"], out[4]["log"]["reward"]),
             (tree[4]["log"]["resets"], out[4]["log"]["resets"]), (shared, out[4]["again"])]
    for original, copy in pairs:
        assert copy.dtype == original.dtype and copy.shape == original.shape
        assert torch.equal(copy, original)
    # the copies are the caller's: the graph's buffers may change under them
    for flat in flats:
        flat.zero_()
    assert torch.equal(out[0]["policy"], tree[0]["policy"])


@pytest.mark.parametrize("backend", ["cpu", "warp"])
def test_cuda_graph_switch_without_cuda_is_a_config_error(backend):
    from canter.envs.manager_env import ManagerBasedRLEnv
    from canter.tasks import REGISTRY

    if backend == "warp":
        pytest.importorskip("mujoco_warp")
    cfg = REGISTRY.get("cartpole").env_cfg()
    cfg.num_envs, cfg.device, cfg.cuda_graph = 4, "cpu", True
    cfg.sim.backend = backend  # type: ignore[assignment]
    with pytest.raises(ConfigError, match=r"env\.cuda_graph: .*needs the warp backend on a CUDA device"):
        ManagerBasedRLEnv(cfg)
