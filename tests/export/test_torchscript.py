"""TorchScript export: same actions as the torch policy for MLP, GRU and LSTM, metadata in the archive."""

from __future__ import annotations

import pytest
import torch

from canter.core.errors import CanterError
from canter.export import parity
from canter.export.describe import describe_policy
from canter.export.module import ExportableActor
from canter.export.torchscript import load_torchscript, save_torchscript

from .helpers import ARCHITECTURES


@pytest.mark.parametrize("architecture", ARCHITECTURES)
def test_torchscript_matches_torch_and_carries_the_metadata(env, policies, tmp_path, architecture):
    policy = policies[architecture]
    actor = ExportableActor(policy)
    metadata = describe_policy(env, actor, "dog-flat")
    path = save_torchscript(actor, metadata, tmp_path / "policy.pt")
    module, loaded = load_torchscript(path)
    assert loaded == metadata
    recorded = parity.record_observations(env, policy, 20)
    recorded.starts[9, 2] = True
    for recording in (parity.random_recording(actor.obs_dim, 12, 6, seed=5), recorded):
        reference = parity.torch_actions(policy, recording)
        actions = parity.module_actions(module, len(actor.state_names), actor.num_layers, actor.hidden_dim, recording)
        assert parity.within_tolerance(parity.max_error(actions, reference), reference)


def test_a_torchscript_file_without_canter_metadata_is_refused(tmp_path):
    path = tmp_path / "plain.pt"
    torch.jit.save(torch.jit.trace(torch.nn.Linear(3, 2), torch.zeros(1, 3)), str(path))
    with pytest.raises(CanterError, match="is not a Canter policy"):
        load_torchscript(path)
    (tmp_path / "junk.pt").write_bytes(b"not a zip archive")
    with pytest.raises(CanterError, match="is not a TorchScript file"):
        load_torchscript(tmp_path / "junk.pt")
    with pytest.raises(CanterError, match="no policy file"):
        load_torchscript(tmp_path / "missing.pt")
