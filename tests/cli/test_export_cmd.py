"""canter export and canter deploy run: end to end on a tiny cartpole run, and one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys

import onnx
import pytest
from onnx import TensorProto, helper

from canter.cli.main import main
from canter.core.errors import CanterError
from canter.export.runtime import PolicyRuntime
from canter.export.torchscript import load_torchscript


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    path = tmp_path_factory.mktemp("cli") / "cartpole"
    argv = ["train", "cartpole", "--num-envs", "8", "--max-iterations", "1", "--run-dir", str(path), "--quiet"]
    assert main(argv) == 0
    return path


@pytest.fixture(scope="module")
def exported(run_dir):
    """The run's fp32 ONNX export, written by `canter export`."""
    assert main(["export", str(run_dir), "--record-steps", "10", "--record-envs", "2"]) == 0
    return run_dir / "exported" / "policy.onnx"


def _plain_onnx(path):
    graph = helper.make_graph([helper.make_node("Identity", ["obs"], ["actions"])], "g",
                              [helper.make_tensor_value_info("obs", TensorProto.FLOAT, [1, 4])],
                              [helper.make_tensor_value_info("actions", TensorProto.FLOAT, [1, 4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


def test_export_writes_onnx_int8_and_torchscript_and_deploy_runs_them(run_dir, exported, tmp_path, capsys):
    assert main(["export", str(run_dir), "--quantize", "int8", "--record-steps", "10", "--record-envs", "2"]) == 0
    pt = tmp_path / "ts" / "policy.pt"  # --out is a directory
    assert main(["export", str(run_dir), "--format", "torchscript", "--out", str(pt.parent), "--record-steps", "5"]) == 0
    out = capsys.readouterr().out
    assert "fp32: max |Δaction| vs torch policy" in out and "int8: max |Δaction| vs fp32 export" in out
    fp32 = PolicyRuntime(exported).metadata
    int8 = PolicyRuntime(run_dir / "exported" / "policy.int8.onnx").metadata
    assert fp32.task == "cartpole" and fp32.joint_names == ["slider"] and fp32.control_frequency_hz == pytest.approx(60.0)
    assert int8.quantization == "int8-dynamic" and int8.int8_max_action_error is not None
    assert load_torchscript(pt)[1].task == "cartpole"
    report = json.loads((run_dir / "exported" / "policy.onnx.json").read_text())
    assert report["max_action_error"]["fp32"]["recorded"] < 1e-5 and report["recorded_envs"] == 2
    result_file = tmp_path / "deploy.json"
    argv = ["deploy", "run", str(exported), "--duration", "0.25", "--json", "--out", str(tmp_path)]
    assert main(argv) == 0
    result = json.loads(capsys.readouterr().out)
    assert result == json.loads(result_file.read_text())
    assert result["task"] == "cartpole" and result["rate_hz"] == pytest.approx(60.0) and result["scheduled_ticks"] == 15
    # a score over whole episodes, back to back: the summary says there were no deadlines to keep
    assert main(["deploy", "run", str(exported), "--episodes", "1", "--unpaced", "--duration", "60"]) == 0
    assert "unpaced: no deadlines; episodes: 1 (ended by" in " ".join(capsys.readouterr().out.split())


def test_bad_arguments_raise_canter_errors(run_dir, exported, tmp_path):
    policy = exported
    cases = [
        (["export", str(tmp_path / "nope")], "no run directory at"),
        (["export", str(tmp_path)], "is not a Canter run directory"),
        (["export", str(run_dir), "--record-steps", "0"], "--record-steps"),
        (["deploy", "frobnicate"], "invalid choice 'frobnicate'"),
        (["deploy", "run", str(tmp_path / "missing.onnx")], "no policy file at"),
        (["deploy", "run", str(_plain_onnx(tmp_path / "plain.onnx"))], "is not a Canter policy"),
        (["deploy", "run", str(policy), "--rate", "7"], "--rate 7 Hz is not a whole number of physics steps"),
        (["deploy", "run", str(policy), "dog-flat"], "task 'dog-flat' steps physics at"),
        (["deploy", "run", str(policy), "--photos", "unseen"], "--photos: this task composes no camera image over photos"),
        (["deploy", "run", str(policy), "--command", "1", "0", "0"], "--command: this task has no velocity command"),
        (["deploy", "run", str(policy), "--episodes", "0"], "--episodes: must be >= 1"),
        (["deploy", "run", str(policy), "--camera", "top"], "--camera: needs --video"),
        (["deploy", "run", str(policy), "--video", str(tmp_path / "v.mp4"), "--width", "0"], "--width/--height: must be >= 1"),
    ]
    for argv, message in cases:
        with pytest.raises(CanterError, match=message):
            main(argv)


@pytest.mark.parametrize(("name", "message"), [("missing.onnx", "no policy file at"), ("plain.onnx", "is not a Canter policy")])
def test_deploy_errors_are_one_line_with_exit_code_2(tmp_path, name, message):
    _plain_onnx(tmp_path / "plain.onnx")
    code = "from canter.cli.main import entrypoint; entrypoint()"
    result = subprocess.run([sys.executable, "-c", code, "deploy", "run", str(tmp_path / name)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("canter: error:")]
    assert len(errors) == 1 and message in errors[0]


def test_deploy_films_the_stand_in_robot(exported, tmp_path):
    """`deploy run --video`: env 0 through MuJoCo's renderer, one frame per tick at the loop's rate (a
    subprocess: the entry point chooses MUJOCO_GL for its process)."""
    import imageio.v3 as iio

    video = tmp_path / "deploy.mp4"
    result = subprocess.run([sys.executable, "-m", "canter", "deploy", "run", str(exported), "--duration", "0.25",
                             "--unpaced", "--video", str(video), "--width", "160", "--height", "120", "--json"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    frames = iio.imread(video)
    assert report["video"] == str(video) and report["stopped_by"] is None
    assert frames.shape == (report["ticks"], 120, 160, 3) and frames.std() > 1.0
