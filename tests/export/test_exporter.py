"""export_policy end to end: files, JSON report, int8 error against fp32, and a parity check that fails."""

from __future__ import annotations

import json
import re

import numpy as np
import onnx
import pytest

from canter.core.errors import CanterError
from canter.export import parity
from canter.export.exporter import export_policy
from canter.export.runtime import PolicyRuntime
from canter.export.torchscript import load_torchscript


@pytest.mark.parametrize("architecture", ["mlp", "lstm"])
def test_onnx_int8_export_reports_its_action_error_against_fp32(env, policies, tmp_path, architecture):
    policy = policies[architecture]
    fp32 = export_policy(env, policy, "dog-flat", fmt="onnx", out=tmp_path / "p.onnx", record_steps=20)
    int8 = export_policy(env, policy, "dog-flat", fmt="onnx", out=tmp_path / "p.int8.onnx", quantize="int8", record_steps=20)
    assert int8.int8_max_action_error is not None
    report = json.loads((tmp_path / "p.int8.onnx.json").read_text())
    assert report["int8_max_action_error"] == int8.int8_max_action_error
    assert report["max_action_error"]["fp32"]["recorded"] < 1e-5
    md = PolicyRuntime(tmp_path / "p.int8.onnx").metadata
    assert md.quantization == "int8-dynamic" and md.int8_max_action_error == int8.int8_max_action_error
    assert PolicyRuntime(tmp_path / "p.onnx").metadata.quantization == "none"
    ops = {node.op_type for node in onnx.load(str(tmp_path / "p.int8.onnx")).graph.node}
    assert "MatMulInteger" in ops and "DynamicQuantizeLSTM" not in ops  # recurrent layers stay float
    # the error is that of a real quantization: not zero, and small against the actions themselves
    recording = parity.random_recording(fp32.metadata.observation_dim, 5, 4, seed=7)
    reference = parity.onnx_actions(PolicyRuntime(tmp_path / "p.onnx"), recording)
    assert 0.0 < int8.int8_max_action_error < 0.05 * np.abs(reference).max()
    shrink = 0.6 if architecture == "mlp" else 0.9  # an LSTM's recurrent weights stay float
    assert (tmp_path / "p.int8.onnx").stat().st_size < shrink * (tmp_path / "p.onnx").stat().st_size


def test_torchscript_int8_export_reports_its_error(env, policies, tmp_path):
    report = export_policy(env, policies["gru"], "dog-flat", fmt="torchscript", out=tmp_path / "p.int8.pt",
                           quantize="int8", record_steps=20)
    _, md = load_torchscript(tmp_path / "p.int8.pt")
    assert md.quantization == "int8-dynamic" and md.int8_max_action_error == report.int8_max_action_error
    # the policies' actions reach 1.5 on env observations: a broken quantization would be off by O(1)
    assert report.int8_max_action_error is not None and 0.0 < report.int8_max_action_error < 0.2


def test_a_failed_parity_check_stops_the_export(env, policies, tmp_path, monkeypatch):
    monkeypatch.setattr(parity, "PARITY_TOLERANCE", 0.0)  # float rounding alone now exceeds it
    with pytest.raises(CanterError, match="export parity check failed: onnx on random observations"):
        export_policy(env, policies["gru"], "dog-flat", fmt="onnx", out=tmp_path / "p.onnx", record_steps=5)
    assert list(tmp_path.iterdir()) == []  # neither the file that failed nor its scratch folder


def test_a_failed_export_leaves_the_previous_one_as_it_was(env, policies, tmp_path, monkeypatch):
    out = tmp_path / "p.onnx"
    export_policy(env, policies["mlp"], "dog-flat", fmt="onnx", out=out, record_steps=5)
    before = {path.name: path.read_bytes() for path in tmp_path.iterdir()}
    assert set(before) == {"p.onnx", "p.onnx.json"}
    monkeypatch.setattr(parity, "PARITY_TOLERANCE", 0.0)
    with pytest.raises(CanterError, match="export parity check failed"):  # another policy, to the same file
        export_policy(env, policies["gru"], "dog-flat", fmt="onnx", out=out, record_steps=5)
    assert {path.name: path.read_bytes() for path in tmp_path.iterdir()} == before
    assert PolicyRuntime(out).metadata.architecture == "mlp"


def test_an_actor_reading_two_groups_is_refused(env, tmp_path):
    from canter.core.rng import make_generator
    from canter.rl.config import PolicyCfg
    from canter.rl.factory import make_policy

    cfg = PolicyCfg(actor_hidden_dims=(8,), critic_hidden_dims=(8,), actor_obs_groups=("policy", "critic"))
    policy = make_policy(env.observation_shapes, env.num_actions, cfg, init_generator=make_generator(0, "cpu"))
    with pytest.raises(CanterError, match="reads 2 vector observation groups"):
        export_policy(env, policy, "dog-flat", fmt="onnx", out=tmp_path / "p.onnx")


@pytest.mark.parametrize("fmt", ["onnx", "torchscript"])
def test_an_export_that_cannot_be_written_is_one_error_naming_it_and_leaves_nothing(env, policies, tmp_path, monkeypatch, fmt):
    """A full disk: one error naming the file (torch.jit.save would abort the whole process where it
    cannot write, so the archive is made in memory first), no scratch folder left behind."""
    import errno
    import pathlib

    from canter.core.files import WriteError
    from canter.export import onnx_export

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    if fmt == "onnx":
        monkeypatch.setattr(onnx_export.onnx, "save", full)
    else:
        monkeypatch.setattr(pathlib.Path, "write_bytes", full)
    out = tmp_path / ("p.onnx" if fmt == "onnx" else "p.pt")
    with pytest.raises(WriteError, match=rf"^cannot write {re.escape(str(out))}: disk full \([0-9,]+ free\)$"):
        export_policy(env, policies["mlp"], "dog-flat", fmt=fmt, out=out, record_steps=5)
    assert list(tmp_path.iterdir()) == []
