"""Atari policies exported: the frames in, the logits of the game's action set out, the game's settings in
the metadata; the runtime picks the greedy action the env would play, and `deploy run` plays a game."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch
from torch import nn

from canter.core.device import torch_threads
from canter.core.errors import CanterError
from canter.core.rng import make_generator
from canter.envs.atari import AtariEnv, AtariEnvCfg
from canter.export import parity
from canter.export.describe import describe_game_policy
from canter.export.exporter import SUFFIX, export_policy, exportable
from canter.export.metadata import ActionTermInfo, PolicyMetadata, format_version_for
from canter.export.onnx_export import save_onnx
from canter.export.realtime import RealtimeCfg, run_realtime
from canter.export.runtime import PolicyRuntime
from canter.export.torchscript import load_torchscript
from canter.rl.factory import make_policy
from canter.rl.modules import ActorCritic
from canter.tasks.atari import atari_agent_cfg

from .helpers import dog_env, trained_looking_policy

PONG_ACTIONS = ["NOOP", "FIRE", "RIGHT", "LEFT", "RIGHTFIRE", "LEFTFIRE"]


def _pong(num_envs: int, **overrides) -> AtariEnv:
    return AtariEnv(AtariEnvCfg(game="pong", num_envs=num_envs, num_threads=1, seed=0, **overrides))


def _policy(env: AtariEnv, *, seed: int = 0, noop: bool = False, rnn: str = "none") -> ActorCritic:
    """The Atari task's policy (Nature CNN, linear head; rnn "gru"/"lstm": a memory of 32 between them)
    with its head scaled so that the logits spread over a few units (their initial gain of 0.01 makes
    every action nearly equally likely, and a 1e-5 tolerance would mean little); noop: a head that
    always prefers NOOP by 5."""
    cfg = dataclasses.replace(atari_agent_cfg().policy, rnn_type=rnn, rnn_hidden_dim=32)  # type: ignore[arg-type]
    policy = make_policy(env.observation_shapes, env.num_actions, cfg, init_generator=make_generator(seed, "cpu"))
    head = [m for m in policy.actor if isinstance(m, nn.Linear)][-1]
    with torch.no_grad():
        if noop:
            head.weight.zero_()
            head.bias.copy_(torch.tensor([5.0, 0, 0, 0, 0, 0]))
        else:
            head.weight.mul_(300.0)
    return policy.eval()


@pytest.fixture(scope="module")
def game():
    env = _pong(4)
    return env, _policy(env)


@pytest.fixture(scope="module")
def onnx_file(game, tmp_path_factory):
    env, policy = game
    out = tmp_path_factory.mktemp("atari") / "policy.onnx"
    report = export_policy(env, policy, "atari-pong", fmt="onnx", out=out, record_steps=12)
    assert report.max_abs_action > 1.0  # the logits spread: the tolerance below is tight
    return out


def test_the_metadata_describes_the_game_and_its_frames(onnx_file):
    md = PolicyRuntime(onnx_file).metadata
    assert md.format_version == 3 and md.inputs == ["image_policy"] and md.outputs == ["actions"]
    assert md.observation_dim == 0 and md.observation_terms == [] and md.num_actuators == 0
    assert md.image_inputs == [{"name": "image_policy", "group": "policy", "shape": [4, 84, 84], "dtype": "uint8"}]
    assert md.control_frequency_hz == pytest.approx(15.0) and md.physics_dt == pytest.approx(1 / 60)
    assert md.decimation == 4
    assert md.game is not None and md.game["rom"] == "pong" and md.game["action_set"] == PONG_ACTIONS
    assert (md.game["frameskip"], md.game["stack"], md.game["resize"]) == (4, 4, [84, 84])
    assert md.game["repeat_action_probability"] == 0.25 and md.game["max_episode_frames"] == 108_000
    (term,) = md.action_terms
    assert term.kind == "discrete" and term.is_discrete and not md.actions_are_commands
    assert term.fields[0]["choices"] == PONG_ACTIONS


def test_runtime_logits_and_choice_equal_the_torch_policy_and_the_env(game, onnx_file):
    """On frames the policy itself played: the runtime's logits within 1e-5 of the torch policy's, and
    the action it picks is the one the env plays for the torch policy's logits."""
    env, policy = game
    recording = parity.record_observations(env, policy, 12, None)
    runtime = PolicyRuntime(onnx_file)
    reference = parity.torch_actions(policy, recording, None)
    for t in range(12):
        frames = recording.image_step(t)["policy"]
        logits = runtime.act(None, {"policy": frames})
        assert np.abs(logits - reference[t]).max() <= 1e-5 * max(1.0, float(np.abs(reference[t]).max()))
        chosen = runtime.commands(logits)["game"]["action"]
        assert chosen.dtype == np.int64 and chosen.shape == (4,)
        np.testing.assert_array_equal(chosen, env.action_indices(torch.from_numpy(reference[t])))
    single = runtime.act(None, {"policy": frames[0]})  # one frame stack (4, 84, 84): one row of logits
    assert single.shape == (6,) and np.abs(single - logits[0]).max() < 1e-6
    assert int(runtime.commands(single)["game"]["action"]) == int(chosen[0])
    with pytest.raises(CanterError, match="action term 'game' \\(discrete\\) asks a choice of action, not for actuator "
                                          "commands; use commands\\(\\)"):
        runtime.ctrl(single)
    with pytest.raises(CanterError, match=r"image 'policy' is float32\(1, 4, 84, 84\); the policy expects uint8\(1, 4, 84, 84\)"):
        runtime.act(None, {"policy": frames[0].astype(np.float32)})


def test_torchscript_takes_the_frames_only_and_int8_reports_its_error(game, tmp_path):
    env, policy = game
    path = tmp_path / "policy.pt"
    export_policy(env, policy, "atari-pong", fmt="torchscript", out=path, record_steps=6)
    module, md = load_torchscript(path)
    assert md.inputs == ["image_policy"] and md.game is not None
    frames = torch.from_numpy(_pong(2).reset()[0]["policy"].numpy())
    with torch.no_grad(), torch_threads(1):
        (logits,) = module(frames)
        expected = policy.act_inference({"policy": frames})
    assert logits.shape == (2, 6) and float((logits - expected).abs().max()) < 1e-5
    report = export_policy(env, policy, "atari-pong", fmt="onnx", out=tmp_path / "policy.int8.onnx", quantize="int8",
                           record_steps=6)
    int8 = PolicyRuntime(tmp_path / "policy.int8.onnx")
    assert int8.metadata.quantization == "int8-dynamic" and int8.metadata.game is not None
    assert report.int8_max_action_error is not None and 0 < report.int8_max_action_error < report.max_abs_action
    # the greedy action of the int8 file against fp32's over the 6 x 4 recorded steps, in the JSON report too
    assert report.int8_choice_agreement is not None and 0.5 <= report.int8_choice_agreement <= 1.0
    assert report.to_dict()["int8_choice_agreement"] == report.int8_choice_agreement
    assert report.int8_choice_agreement * 24 == pytest.approx(round(report.int8_choice_agreement * 24))


def test_choice_agreement_counts_rows_whose_greedy_choice_is_the_same(onnx_file, env):
    md = PolicyRuntime(onnx_file).metadata
    a = np.array([[[1.0, 2, 0, 0, 0, 0], [3, 0, 0, 0, 0, 0]], [[0, 0, 0, 0, 0, 1], [0, 0, 0, 0, 0, 1]]])
    b = np.array([[[0.0, 2, 1, 0, 0, 0], [0, 3, 0, 0, 0, 0]], [[0, 0, 0, 0, 0, 1], [0, 0, 0, 0, 1, 0]]])
    assert parity.choice_agreement(a, b, md) == 0.5  # rows 1 and 3 of 4 agree (argmax 1 vs 1, 5 vs 5)
    assert parity.choice_agreement(a, a, md) == 1.0
    from canter.export.describe import describe_policy
    from canter.export.module import ExportableActor

    dog = ExportableActor(trained_looking_policy(env, "mlp"))
    assert parity.choice_agreement(np.zeros((2, 12)), np.ones((2, 12)), describe_policy(env, dog, "dog-flat")) is None


def test_game_metadata_round_trips_and_malformed_choices_are_one_line(onnx_file):
    md = PolicyRuntime(onnx_file).metadata
    assert PolicyMetadata.from_props(md.to_props(), "x") == md
    with pytest.raises(CanterError, match="field 'action' of action term 'game' needs a name and one of: a scale per "
                                          r"column \(6\), a threshold, a choice per column"):
        ActionTermInfo(name="game", dim=6, actuators=(), joints=(), kind="discrete",
                       fields=[{"name": "action", "columns": [0, 6], "choices": PONG_ACTIONS[:5]}])
    with pytest.raises(CanterError, match="needs a name and one of"):
        ActionTermInfo(name="game", dim=6, actuators=(), joints=(), kind="discrete",
                       fields=[{"name": "action", "columns": [0, 6], "choices": PONG_ACTIONS, "scale": [1.0] * 6}])
    joint = ActionTermInfo(name="j", dim=1, actuators=("a",), joints=("q",), scale=0.5, offset="zero")
    assert format_version_for([joint]) == 1 and format_version_for([joint], vector_input=False) == 3
    props = md.to_props() | {"format_version": "4"}
    with pytest.raises(CanterError, match="policy format version 4 is newer than this Canter's \\(3\\)"):
        PolicyMetadata.from_props(props, "x")


def test_exportable_refuses_a_game_policy_that_reads_a_vector_group(game):
    _, policy = game
    actor, group = exportable(policy, {"policy": torch.uint8}, images_only=True)
    assert group is None and actor.obs_dim == 0
    with pytest.raises(CanterError, match=r"export: the actor reads 1 vector observation groups \('policy',\); export "
                                          r"supports none \(image groups only\) for a game"):
        exportable(trained_looking_policy(dog_env(num_envs=1), "mlp"), images_only=True)


def test_deploy_plays_a_game_in_real_time_and_scores_it(tmp_path):
    """A policy that always plays NOOP loses Pong's first point about 60 ticks (4 s) in; with the game's
    frame cap at 300 frames (75 ticks at 15 Hz) the loop's 84 ticks see one game end by time_out, scored -1."""
    env = _pong(1, max_episode_frames=300)
    policy = _policy(env, noop=True)
    actor, _ = exportable(policy, {"policy": torch.uint8}, images_only=True)
    path = save_onnx(actor, describe_game_policy(env, actor, "atari-pong"), tmp_path / "noop.onnx")
    result = run_realtime(PolicyRuntime(path), "atari-pong", RealtimeCfg(duration_s=5.6, seed=1))
    assert result["rate_hz"] == pytest.approx(15.0) and result["ticks"] + result["skipped_ticks"] == 84
    assert result["episodes"] == 1 and result["episode_endings"] == ["time_out"]
    assert result["episode_returns"] == [-1.0]  # the game's score (scored as `canter eval` scores games)
    assert result["ctrl_max_abs_diff"] is None and "chooses among the game's actions" in result["ctrl_check"]
    with pytest.raises(CanterError, match="task 'dog-flat' is a MuJoCo robot; the policy plays the Atari game 'pong'"):
        run_realtime(PolicyRuntime(path), "dog-flat", RealtimeCfg(duration_s=0.1))
    with pytest.raises(CanterError, match="--rate 7 Hz is not a whole number of emulator frames"):
        run_realtime(PolicyRuntime(path), "atari-pong", RealtimeCfg(rate_hz=7.0, duration_s=0.1))
    with pytest.raises(CanterError, match="--command: task 'atari-pong' is an Atari game"):
        run_realtime(PolicyRuntime(path), "atari-pong", RealtimeCfg(duration_s=0.1, command=(1.0, 0.0, 0.0)))


def test_deploy_stopped_by_sigterm_reports_its_ticks_and_keeps_the_video(tmp_path, capsys, monkeypatch):
    """SIGTERM at the 5th frame: the loop stops after that tick, the report says so with the 5 ticks,
    the video holds their 5 frames, and the command ends as interrupted (128 + 15 at the entry point)."""
    import json
    import os
    import signal

    import imageio.v3 as iio

    from canter.cli.main import main
    from canter.cli.video import FrameVideoRecorder
    from canter.core.errors import Interrupted

    env = _pong(1)
    actor, _ = exportable(_policy(env), {"policy": torch.uint8}, images_only=True)
    path = save_onnx(actor, describe_game_policy(env, actor, "atari-pong"), tmp_path / "pong.onnx")
    capture = FrameVideoRecorder.capture

    def capture_then_sigterm(self):
        capture(self)
        if self.frames == 5:
            os.kill(os.getpid(), signal.SIGTERM)

    monkeypatch.setattr(FrameVideoRecorder, "capture", capture_then_sigterm)
    video = tmp_path / "pong.mp4"
    with pytest.raises(CanterError, match="--camera: an Atari game is filmed from its own frames; there is no camera"):
        main(["deploy", "run", str(path), "--video", str(video), "--camera", "top"])
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(Interrupted) as stopped:
        main(["deploy", "run", str(path), "--duration", "5", "--video", str(video), "--json", "--out", str(tmp_path)])
    assert stopped.value.signum == signal.SIGTERM
    report = json.loads(capsys.readouterr().out)
    assert report == json.loads((tmp_path / "deploy.json").read_text())
    assert report["stopped_by"] == "SIGTERM" and report["ticks"] == 5 and report["video"] == str(video)
    assert iio.imread(video).shape == (5, 336, 336, 3)  # the newest 84 x 84 frame, scaled 4x
    assert signal.getsignal(signal.SIGTERM) == before and not list(tmp_path.glob(".pong.mp4.*"))


def test_the_metadata_preprocessing_is_gymnasiums_bit_for_bit(onnx_file):
    """The frames a game policy reads, as its metadata describes them, are what Gymnasium's Atari wrappers
    make of the same game: 200 steps of random actions on one Pong game (no sticky actions or no-op starts,
    so that both emulators play the same frames; no FIRE at reset, which Gymnasium's wrappers lack)."""
    gym = pytest.importorskip("gymnasium")
    import ale_py

    game = PolicyRuntime(onnx_file).metadata.game
    assert game is not None and game["stack_padding"] == "zero frames" and game["resize_interpolation"] == "area"
    gym.register_envs(ale_py)
    reference = gym.make(f"ALE/{game['rom'].capitalize()}-v5", frameskip=1, repeat_action_probability=0.0,
                         full_action_space=game["full_action_space"])
    reference = gym.wrappers.AtariPreprocessing(reference, noop_max=0, frame_skip=game["frameskip"],
                                                screen_size=game["resize"][0], grayscale_obs=game["grayscale"])
    reference = gym.wrappers.FrameStackObservation(reference, game["stack"], padding_type="zero")
    ours = _pong(1, repeat_action_probability=0.0, noop_max=0, use_fire_reset=False)
    frames, _ = reference.reset(seed=5)
    ours.reset()
    rng = np.random.default_rng(0)
    for step in range(200):
        np.testing.assert_array_equal(ours.get_observations()["policy"][0].numpy(), np.asarray(frames), err_msg=f"step {step}")
        action = int(rng.integers(0, ours.num_actions))
        frames, *_ = reference.step(action)
        ours.step(torch.tensor([action]))


@pytest.mark.parametrize("rnn", ["gru", "lstm"])
def test_a_recurrent_game_policy_exports_with_its_state(tmp_path, rnn):
    """A memory between the CNN and the head: the graph takes the frames and the state, and both files
    match the torch policy over recorded games (export_policy's parity checks, episode starts included)."""
    env = _pong(3)
    policy = _policy(env, rnn=rnn)
    for fmt in ("onnx", "torchscript"):
        report = export_policy(env, policy, "atari-pong", fmt=fmt, out=tmp_path / f"policy{SUFFIX[fmt]}", record_steps=8)
        md = report.metadata
        states = ["h", "c"] if rnn == "lstm" else ["h"]
        assert md.inputs == ["image_policy", *(f"{s}_in" for s in states)] and md.state_inputs == [f"{s}_in" for s in states]
        assert md.recurrent == {"type": rnn, "num_layers": 1, "hidden_dim": 32} and report.max_abs_action > 0.5
        assert report.errors["fp32"]["recorded"] <= 1e-5 * max(1.0, report.max_abs_action)
    runtime = PolicyRuntime(tmp_path / "policy.onnx")
    frames = env.reset()[0]["policy"].numpy()
    first = runtime.act(None, {"policy": frames})
    assert [state.shape for state in runtime.state] == [(1, 3, 32)] * len(runtime.state)
    assert np.abs(runtime.act(None, {"policy": frames}) - first).max() > 1e-4  # the memory moved the logits


def test_the_exported_file_plays_on_gymnasiums_ale_with_its_metadata_alone(onnx_file, tmp_path):
    """scripts/play_atari_onnx.py: Gymnasium's ALE and wrappers built from the metadata, the policy through the
    torch-free runtime; a robot policy is one line and exit 2."""
    import subprocess
    import sys

    pytest.importorskip("gymnasium")
    script = ["scripts/play_atari_onnx.py"]
    result = subprocess.run([sys.executable, *script, str(onnx_file), "--games", "2", "--max-frames", "400"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stdout.splitlines() if line.startswith(("game", "mean"))]
    assert [line.split(":")[0] for line in lines[:2]] == ["game 1", "game 2"]
    steps = [int(line.split(" in ")[1].split()[0]) for line in lines[:2]]
    assert all(90 <= n <= 100 for n in steps)  # 400 frames, less the no-op starts and the FIRE at reset
    assert lines[2].startswith("mean score") and lines[2].endswith("over 2 games (pong, Gymnasium's ALE)")
    env = dog_env(num_envs=1)
    from canter.export.describe import describe_policy
    from canter.export.module import ExportableActor

    dog = ExportableActor(trained_looking_policy(env, "mlp"))
    robot = save_onnx(dog, describe_policy(env, dog, "dog-flat"), tmp_path / "dog.onnx")
    result = subprocess.run([sys.executable, *script, str(robot)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 2 and "drives a robot (task 'dog-flat')" in result.stderr and "Traceback" not in result.stderr
