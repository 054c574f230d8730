"""The canter command: list, bench env JSON keys, one-line errors with non-zero exits."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from canter.cli.main import main

from .test_train import _in_process, _one_error_line


def _run(*args: str) -> subprocess.CompletedProcess:
    code = "from canter.cli.main import entrypoint; entrypoint()"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=300)


def test_list_json_names_every_task_with_its_model(capsys):
    assert main(["list", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    names = {row["name"] for row in rows}
    assert {"cartpole", "ant", "atari-pong"} <= names
    for row in rows:
        assert row["model_path"].endswith(".xml") or row["model_path"].startswith("ale-py:")
        size = row["observation_sizes"]["policy"]
        assert row["action_size"] > 0 and (size > 0 if isinstance(size, int) else len(size) == 3 and min(size) > 0)
    pong = next(row for row in rows if row["name"] == "atari-pong")
    assert pong["observation_sizes"]["policy"] == [4, 84, 84] and pong["action_size"] == 6


def test_list_table_names_every_task_in_full_at_80_columns(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 80
    from canter.tasks import REGISTRY

    for spec in REGISTRY:  # in the first column of both tables, never cut ("hand-cube-axi…")
        assert len(re.findall(rf"^│ {re.escape(spec.name)} +│", out, flags=re.M)) == 2, spec.name


def test_bench_env_json_has_the_documented_keys(capsys, tmp_path):
    argv = [
        "bench",
        "env",
        "cartpole",
        "--out",
        str(tmp_path / "bench"),
        "--num-envs",
        "16",
        "--seconds",
        "0.05",
        "--repeats",
        "2",
        "--json",
    ]
    assert main(argv) == 0
    result = json.loads(capsys.readouterr().out)
    assert json.loads((tmp_path / "bench" / "env.json").read_text()) == result  # --out keeps the same report
    for key in (
        "task",
        "num_envs",
        "threads",
        "backend",
        "decimation",
        "env_steps_per_s",
        "raw_rollout_steps_per_s",
        "ratio",
    ):
        assert key in result
    assert result["num_envs"] == 16 and result["decimation"] == 2
    assert result["ratio"] == pytest.approx(result["env_steps_per_s"] / result["raw_rollout_steps_per_s"])
    assert 0.0 < result["env_physics_share"] < 1.0  # the physics is part of the env step, not all of it
    # the third side: raw Batch.step on states recorded from the env
    assert result["raw_env_states_steps_per_s"] > 0.0
    assert result["ratio_env_states"] == pytest.approx(result["env_steps_per_s"] / result["raw_env_states_steps_per_s"])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("bench", "env", "nope"), "unknown task 'nope'"),
        (("bench", "env", "--model", "/nonexistent/ant.xml"), "model file not found"),
        (("bench", "env", "--num-envs", "0"), "num_envs"),
        (("bench", "nope"), "unknown benchmark"),
        (("frobnicate",), "unknown command"),
    ],
)
def test_bad_input_is_one_line_and_nonzero(args, message, capfd):
    result = _in_process(capfd, *args)  # the console script's entry point; the broken MJCF below runs as a process
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("canter: error:")]
    assert len(errors) == 1 and message in errors[0]


def test_broken_mjcf_is_reported_by_name(tmp_path):
    bad = tmp_path / "broken.xml"
    bad.write_text("<mujoco><worldbody><geom type='box' size='1'/></worldbody>")
    result = _run("bench", "env", "--model", str(bad))
    assert result.returncode == 2 and "broken MJCF" in result.stderr and "Traceback" not in result.stderr


def test_an_out_folder_that_cannot_be_made_fails_before_the_bench_runs(tmp_path, capfd, monkeypatch):
    from canter.cli.bench.qp import QpArgs

    def must_not_run(self, rest):
        raise AssertionError("the benchmark ran although its --out cannot be written")

    monkeypatch.setattr(QpArgs, "run", must_not_run)
    a_file = tmp_path / "results.json"
    a_file.write_text("kept")
    line = _one_error_line(_in_process(capfd, "bench", "qp", "--out", str(a_file)))
    assert line == f"canter: error: --out {a_file} is a file, not a directory"
    line = _one_error_line(_in_process(capfd, "bench", "qp", "--out", str(a_file / "sub")))
    assert line == f"canter: error: cannot create --out {a_file / 'sub'}: Not a directory"
    assert a_file.read_text() == "kept"


def test_out_folders_made_for_a_command_that_fails_are_removed_and_existing_ones_kept(tmp_path, capfd):
    out = tmp_path / "a" / "b"
    assert "unknown task 'nope'" in _one_error_line(_in_process(capfd, "bench", "train", "nope", "--out", str(out)))
    assert list(tmp_path.iterdir()) == []  # a and a/b were made for the command and go with its failure
    out.mkdir(parents=True)
    (out / "earlier.json").write_text("{}")
    _one_error_line(_in_process(capfd, "bench", "train", "nope", "--out", str(out)))
    assert (out / "earlier.json").read_text() == "{}"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("bench", "qp", "--iterations", "-1"), "bench qp: --iterations and --threads must be >= 0 (0: chosen), got -1, 0"),
        (("bench", "qp", "--threads", "-1"), "bench qp: --iterations and --threads must be >= 0 (0: chosen), got 0, -1"),
        (("bench", "latency", "--gru-hidden-dim", "0"), "--gru-hidden-dim: must be >= 1, got 0"),
        (("bench", "latency", "policy.onnx"), "bench latency times fresh networks of a TASK's shape, not a file "
         "(policy.onnx); an exported file's own inference latency is in `canter deploy run FILE --unpaced`"),
        (("bench", "scaling", "cartpole", "--sample-interval", "0"), "--sample-interval: must be > 0 seconds, got 0"),
        (("bench", "train", "cartpole", "--cores-per-process", "0"), "--cores-per-process: must be >= 1, got 0"),
        (("bench", "sb3", "--minutes", "0"), "--minutes: must be > 0, got 0"),
        (("bench", "sb3", "--sb3-envs", "0"), "--sb3-envs: must be >= 1, got 0"),
        # seeds feed numpy's SeedSequence and ale-py, which take no negative one (it was an internal error)
        (("train", "cartpole", "--seed", "-1"), "--seed: must be >= 0, got -1"),
        (("bench", "env", "cartpole", "--seed", "-1"), "--seed: must be >= 0, got -1"),
        (("bench", "atari", "--seed", "-3"), "--seed: must be >= 0, got -3"),
        (("train", "cartpole", "--env.seed", "-2"), "env.seed: must be >= 0, got -2"),
    ],
)
def test_numbers_out_of_range_are_one_line_before_any_work(args, message, capfd):
    assert _one_error_line(_in_process(capfd, *args)) == f"canter: error: {message}"


@pytest.mark.parametrize(("flag", "value"), [("--steps", "0"), ("--width", "-1"), ("--height", "0")])
def test_play_refuses_sizes_below_one(dog_rough_run, flag, value, capfd):
    line = _one_error_line(_in_process(capfd, "play", str(dog_rough_run), flag, value))
    assert line == f"canter: error: {flag}: must be >= 1, got {value}"


def test_play_refuses_a_camera_without_a_video(dog_rough_run, capfd):
    line = _one_error_line(_in_process(capfd, "play", str(dog_rough_run), "--camera", "track"))
    assert line == "canter: error: --camera: needs --video (the camera films the video; without one nothing is rendered)"


def test_a_bench_report_is_written_whole_or_named_in_one_line(tmp_path, monkeypatch):
    import errno

    from canter.cli.bench.output import write_report
    from canter.core import files
    from canter.core.errors import CanterError

    path = write_report(tmp_path / "new" / "r.json", {"fps": 1.5})
    assert json.loads(path.read_text()) == {"fps": 1.5}

    def full_disk(src, dst):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(files.os, "replace", full_disk)
    with pytest.raises(CanterError, match=r"^cannot write .*r\.json: disk full \([0-9,]+ free\)$"):
        write_report(path, {"fps": 2.5})
    assert json.loads(path.read_text()) == {"fps": 1.5} and sorted(p.name for p in path.parent.iterdir()) == ["r.json"]


def test_a_full_disk_in_a_write_of_no_file_of_ours_is_still_one_line(monkeypatch, capsys):
    """An OSError of a full disk that reaches the entry point (a library writing a file of its own)
    is one error line and exit 2, not an internal error; other errors stay internal errors (exit 1)."""
    import errno

    from canter.cli import main as main_module

    for error, code, line in [
        (OSError(errno.ENOSPC, "No space left on device", "/runs/x/plot.png"), 2, "canter: error: cannot write /runs/x/plot.png: disk full"),
        (OSError(errno.EDQUOT, "Disk quota exceeded"), 2, "canter: error: disk full (Disk quota exceeded)"),
        (ValueError("a bug"), 1, "canter: internal error: ValueError: a bug (CANTER_DEBUG=1 shows the traceback)"),
    ]:
        def fail(argv, error=error):
            raise error

        monkeypatch.setattr(main_module, "main", fail)
        monkeypatch.delenv("CANTER_DEBUG", raising=False)
        with pytest.raises(SystemExit) as exit_:
            main_module.entrypoint(["list"])
        assert exit_.value.code == code and capsys.readouterr().err.strip() == line
