"""Atari games (canter.envs.atari): preprocessing against a frame computed by hand from the emulator's
screen, frame-stack order, life-loss and reward handling on scripted emulator outputs, protocol
settings, and one-line errors for bad input."""

from __future__ import annotations

import itertools
import json
import re
import subprocess
import sys
from typing import Any

import numpy as np
import pytest
import torch

ale_py = pytest.importorskip("ale_py")
cv2 = pytest.importorskip("cv2")

from canter.core.errors import CanterError, ConfigError  # noqa: E402
from canter.envs.atari import AtariEnv, AtariEnvCfg  # noqa: E402


def _plain(num_envs: int = 1, **kwargs) -> AtariEnv:
    """Deterministic Pong: no sticky actions, no no-op starts, no FIRE at reset, one frame per step."""
    settings: dict[str, Any] = dict(game="pong", num_envs=num_envs, frameskip=1, repeat_action_probability=0.0,
                                    noop_max=0, use_fire_reset=False, num_threads=1)
    settings.update(kwargs)
    return AtariEnv(AtariEnvCfg(**settings))


def test_frames_are_the_area_resized_grayscale_screen_stacked_oldest_first():
    env = _plain()
    obs, _ = env.reset()
    reference = ale_py.ALEInterface()
    reference.setInt("random_seed", 0)
    reference.setFloat("repeat_action_probability", 0.0)
    reference.loadROM(str(ale_py.roms.get_rom_path("pong")))
    reference.reset_game()
    up = env.num_actions and 2  # minimal action set of Pong: NOOP, FIRE, RIGHT (up), LEFT, ...
    frames = [obs["policy"][0, -1].numpy()]
    assert obs["policy"].dtype == torch.uint8 and obs["policy"].shape == (1, 4, 84, 84)
    for _ in range(6):
        previous = obs["policy"].clone()
        obs, *_ = env.step(torch.tensor([up]))
        reference.act(reference.getMinimalActionSet()[up])
        # grayscale 210x160 screen, area-averaged to 84x84 (OpenCV's INTER_AREA), by hand
        expected = cv2.resize(reference.getScreenGrayscale(), (84, 84), interpolation=cv2.INTER_AREA)
        assert np.array_equal(obs["policy"][0, -1].numpy(), expected)
        # the stack shifts by one: the oldest frame leaves at index 0, the newest enters at index -1
        assert torch.equal(obs["policy"][0, :-1], previous[0, 1:])
        frames.append(obs["policy"][0, -1].numpy())
    assert any(not np.array_equal(a, b) for a, b in itertools.pairwise(frames))  # the paddle moved


class _ScriptedEmulator:
    """Stands in for ALEVectorInterface: returns scripted rewards, game-overs and lives."""

    def __init__(self, script: list[tuple[list[int], list[bool], list[int]]]):
        self.script = list(script)
        self.sent: list[np.ndarray] = []

    def send(self, actions, strength):
        self.sent.append(np.asarray(actions).copy())

    def recv(self):
        reward, over, lives = self.script.pop(0)
        n = len(reward)
        info = {"lives": np.array(lives, dtype=np.int32), "env_id": np.arange(n, dtype=np.int32)}
        obs = np.zeros((n, 4, 84, 84), dtype=np.uint8)
        return obs, np.array(reward, dtype=np.int32), np.array(over), np.zeros(n, dtype=bool), info


def _scripted(episodic_life: bool = True, clip_rewards: bool = True) -> tuple[AtariEnv, _ScriptedEmulator]:
    env = _plain(num_envs=2, game="breakout", episodic_life=episodic_life, clip_rewards=clip_rewards)
    env.reset()
    env._lives[:] = 5
    script = [
        ([4, 0], [False, False], [5, 5]),
        ([0, 7], [False, False], [4, 5]),  # env 0 loses a life
        ([1, 0], [False, True], [4, 5]),  # env 1's game is over (the info is its new game's: 5 lives)
        ([0, 0], [True, False], [5, 5]),  # env 0's game is over
    ]
    fake = _ScriptedEmulator(script)
    env.ale = fake  # type: ignore[assignment]
    return env, fake


def test_lost_lives_are_terminal_for_the_learner_and_games_are_the_episodes():
    env, fake = _scripted()
    one_hot = torch.tensor([[0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 2.0]])
    steps = [env.step(one_hot) for _ in range(4)]
    assert [a.tolist() for a in fake.sent] == [[1, 3]] * 4  # the argmax of each row
    rewards = [s[1].tolist() for s in steps]
    assert rewards == [[1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [0.0, 0.0]]  # sign(r) for the learner
    terminated = [s[2].tolist() for s in steps]
    assert terminated == [[False, False], [True, False], [False, True], [True, False]]
    ends = [s[4]["episode_end"].tolist() for s in steps]
    assert ends == [[False, False], [False, False], [False, True], [True, False]]
    # unclipped game scores where games ended: env 1 scored 7, env 0 scored 4 + 1 over two lives
    assert steps[2][4]["episode_return"][1] == 7.0 and steps[3][4]["episode_return"][0] == 5.0
    assert steps[3][4]["episode_length"][0] == 4.0 and env.episode_length_buf.tolist() == [0, 1]


def test_evaluation_scores_whole_games_with_unclipped_rewards():
    env, _ = _scripted()
    env.evaluation()
    action = torch.tensor([0, 0])
    steps = [env.step(action) for _ in range(4)]
    assert [s[1].tolist() for s in steps][:2] == [[4.0, 0.0], [0.0, 7.0]]
    assert [s[2].tolist() for s in steps] == [[False, False], [False, False], [False, True], [True, False]]


def test_training_may_play_other_sticky_actions_but_scoring_plays_the_protocols():
    # the protocol's sticky actions at 1.0 repeat NOOP forever; training plays deterministic emulators
    env = _plain(num_envs=2, frameskip=4, repeat_action_probability=1.0, train_repeat_action_probability=0.0)
    assert env.cfg.sticky_actions == 0.0 and env.cfg.evaluation().sticky_actions == 1.0
    assert env.cfg.evaluation().train_repeat_action_probability is None

    def up_and_noop_frames() -> torch.Tensor:
        env.reset()
        for _ in range(12):  # env 0 holds RIGHT (the paddle goes up), env 1 NOOP
            obs, *_ = env.step(torch.tensor([2, 0]))
        return obs["policy"][:, -1]

    frames = up_and_noop_frames()
    assert (frames[0] != frames[1]).sum() > 20  # training: the paddle moved
    env.evaluation()
    assert env.cfg.sticky_actions == 1.0 and not env.cfg.episodic_life and not env.cfg.clip_rewards
    frames = up_and_noop_frames()
    assert torch.equal(frames[0], frames[1])  # scoring: RIGHT never replaces the first NOOP
    with pytest.raises(ConfigError, match="train_repeat_action_probability"):
        AtariEnvCfg(train_repeat_action_probability=1.5).validate()


def test_training_switches_to_the_protocols_sticky_actions_after_its_frames():
    # 2 games x 4 frames per step: the switch comes after the 12th step (96 frames)
    kwargs: dict[str, Any] = dict(num_envs=2, frameskip=4, repeat_action_probability=1.0,
                                  train_repeat_action_probability=0.0, train_repeat_action_frames=96)
    env = _plain(**kwargs)
    env.reset()
    for step in range(1, 13):  # env 0 holds RIGHT, env 1 NOOP
        obs, _reward, terminated, truncated, extras = env.step(torch.tensor([2, 0]))
        if step == 11:
            assert (obs["policy"][0, -1] != obs["policy"][1, -1]).sum() > 20  # deterministic: the paddle moved
            assert not truncated.any() and env.cfg.sticky_actions == 0.0
    # the 12th step cut both games (time-outs for the learner, not game ends for the scores)
    assert truncated.all() and not terminated.any() and not extras["episode_end"].any()
    assert env.cfg.sticky_actions == 1.0 and env.cfg.train_repeat_action_frames is None
    assert env.cfg.episodic_life  # still training: only the stickiness changed
    assert torch.equal(obs["policy"][0], obs["policy"][1])  # new games, first frames
    assert int(env.episode_length_buf.sum()) == 0
    for _ in range(12):
        obs, _reward, _terminated, truncated, _extras = env.step(torch.tensor([2, 0]))
        assert not truncated.any()
    assert torch.equal(obs["policy"][0, -1], obs["policy"][1, -1])  # the protocol's: NOOP repeats forever
    state = env.state_dict()
    assert state["frames"] == 24 * 8

    # a resumed run plays where it left off: past the switch, the protocol's; before it, training's
    resumed = _plain(**kwargs)
    resumed.load_state_dict(state)
    assert resumed.cfg.sticky_actions == 1.0
    early = _plain(**kwargs)
    early.load_state_dict({"games_started": 2, "frames": 8})
    assert early.cfg.sticky_actions == 0.0 and early.cfg.train_repeat_action_frames == 96
    with pytest.raises(ConfigError, match="train_repeat_action_frames: needs train_repeat_action_probability"):
        AtariEnvCfg(train_repeat_action_frames=1000).validate()
    with pytest.raises(ConfigError, match="train_repeat_action_frames"):
        AtariEnvCfg(train_repeat_action_probability=0.0, train_repeat_action_frames=0).validate()
    assert AtariEnvCfg(train_repeat_action_probability=0.0, train_repeat_action_frames=9).evaluation().sticky_actions == 0.25
    # a switch to the same stickiness changes nothing: the games go on
    same = _plain(num_envs=2, train_repeat_action_probability=0.0, train_repeat_action_frames=2)
    same.reset()
    for _ in range(3):
        _obs, _reward, _terminated, truncated, _extras = same.step(torch.tensor([2, 0]))
        assert not truncated.any()
    assert same.cfg.train_repeat_action_frames is None and int(same.episode_length_buf.min()) == 3


def test_protocol_defaults_and_shapes():
    cfg = AtariEnvCfg()
    assert (cfg.frameskip, cfg.repeat_action_probability, cfg.max_episode_frames, cfg.noop_max) == (4, 0.25, 108_000, 30)
    env = AtariEnv(AtariEnvCfg(game="pong", num_envs=3, num_threads=1))
    _obs, _ = env.reset()
    assert env.num_actions == 6 and env.discrete_actions and env.max_episode_length == 27_000
    assert env.observation_shapes == {"policy": (4, 84, 84)} and env.observation_dtypes == {"policy": torch.uint8}
    assert env.step_dt == pytest.approx(4 / 60)
    out = env.step(torch.rand(3, 6))
    assert out[1].dtype == torch.float32 and out[2].dtype == torch.bool and out[3].dtype == torch.bool
    with pytest.raises(ValueError, match="actions"):
        env.step(torch.rand(3, 5))


def test_same_seed_same_games():
    def run(seed: int) -> list[torch.Tensor]:
        env = AtariEnv(AtariEnvCfg(game="pong", num_envs=2, seed=seed, num_threads=1))
        obs = [env.reset()[0]["policy"].clone()]
        generator = torch.Generator().manual_seed(0)
        for _ in range(30):
            obs.append(env.step(torch.rand(2, 6, generator=generator))[0]["policy"].clone())
        return obs

    a, b = run(1), run(1)
    assert all(torch.equal(x, y) for x, y in zip(a, b, strict=True))


def test_unknown_game_is_one_line():
    with pytest.raises(ConfigError, match=r"^env.game: unknown Atari game 'pongg' \(did you mean") as err:
        AtariEnvCfg(game="pongg")
    assert "\n" not in str(err.value)


def test_missing_rom_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv("ALE_ROMS_DIR", str(tmp_path))  # a folder without the ROM files
    with pytest.raises(ConfigError, match=r"^env.game: the ROM of 'pong' is missing or damaged"):
        AtariEnvCfg(game="pong")


@pytest.mark.parametrize(("argv", "message"), [
    (["--env.game", "pongg"], "env.game: unknown Atari game 'pongg'"),
    (["--agent.policy.distribution", "gaussian"], "policy.distribution: 'gaussian' is for Box actions; this env has 6 discrete actions"),
    (["--algo", "dagger"], "algo.algo: 'dagger' regresses continuous actions"),
    (["--backend", "warp"], "--backend: task 'atari-pong' is an Atari game"),
    (["--model", "x.xml"], "--model: task 'atari-pong' is an Atari game"),
])
def test_bad_atari_train_commands_are_one_line(tmp_path, monkeypatch, capfd, argv, message):
    """Through the console script's entry point in this process (output captured at the file
    descriptors); the first case also in a process of its own, as a shell runs it."""
    from ..cli.test_train import _in_process

    monkeypatch.chdir(tmp_path)
    command = ["train", "atari-pong", "--num-envs", "2", "--max-iterations", "1", *argv]
    result = _in_process(capfd, *command)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode == 2 and len(lines) == 1 and message in lines[0], result.stderr
    assert not any(tmp_path.iterdir())  # nothing written
    if argv[0] == "--env.game":
        result = subprocess.run([sys.executable, "-m", "canter", *command], cwd=tmp_path, capture_output=True,
                                text=True, timeout=300)
        assert result.returncode == 2 and result.stderr.strip().splitlines() == lines, result.stderr


def _canter(args: list[str], cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "canter", *args], cwd=cwd, capture_output=True, text=True, timeout=600)


def test_train_eval_play_of_an_atari_run(tmp_path, capsys):
    """One PPO iteration on 4 short games (100 agent steps), then whole-game evaluation and a video.
    In process, but for the video (a subprocess: `play --video` chooses MUJOCO_GL for its process)."""
    from canter.cli.main import main

    run = tmp_path / "pong"
    assert main(["train", "atari-pong", "--num-envs", "4", "--max-iterations", "1", "--run-dir", str(run),
                 "--env.max-episode-frames", "400", "--agent.algo.num-steps-per-env", "8", "--quiet"]) == 0
    capsys.readouterr()
    assert main(["eval", str(run), "--episodes", "4", "--num-envs", "4", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    # unclipped scores of whole games, cut at 100 agent steps: a score in [-21, 21], 100 steps long
    assert report["episodes"] == 4 and -21 <= report["mean_return"] <= 21 and 90 <= report["mean_episode_length"] <= 100
    assert report["stochastic"] is False
    # --stochastic samples the categorical policy from a fixed seed: a repeat plays the same games
    sampled = []
    for _ in range(2):
        assert main(["eval", str(run), "--episodes", "4", "--num-envs", "4", "--stochastic", "--json"]) == 0
        sampled.append(json.loads(capsys.readouterr().out))
    assert sampled[0]["stochastic"] is True and sampled[0] == sampled[1]
    video = tmp_path / "pong.mp4"
    result = _canter(["play", str(run), "--steps", "20", "--num-envs", "2", "--video", str(video)], tmp_path)
    assert result.returncode == 0, result.stderr
    assert video.stat().st_size > 1000
    with pytest.raises(CanterError, match="--camera: an Atari game is filmed from its own frames"):
        main(["play", str(run), "--steps", "2", "--video", str(tmp_path / "cam.mp4"), "--camera", "top"])
    assert not (tmp_path / "cam.mp4").exists()
    # export and deploy: the game's frames in, its logits out, one game played in real time at 15 Hz
    assert main(["export", str(run), "--record-envs", "2", "--record-steps", "10"]) == 0
    assert "frames 4x84x84 -> 6 logits of pong's actions, 15 Hz" in " ".join(capsys.readouterr().out.split())
    assert main(["deploy", "run", str(run / "exported" / "policy.onnx"), "--duration", "0.5", "--json"]) == 0
    deployed = json.loads(capsys.readouterr().out)
    assert deployed["task"] == "atari-pong" and deployed["rate_hz"] == 15.0 and deployed["ticks"] >= 5
    # commands for MuJoCo robots name the game (one line and exit 2 through the entry point: tests/cli)
    with pytest.raises(CanterError, match=re.escape("bench env: task 'atari-pong' is an Atari game")):
        main(["bench", "env", "atari-pong", "--num-envs", "2"])


def test_play_interrupted_keeps_the_video_so_far_and_says_where(tmp_path, capsys, monkeypatch):
    """Ctrl-C during `canter play --video`: the frames captured so far are a finished, readable mp4 and the
    line names it; the interrupt still ends the command (the entry point's "interrupted", exit 130)."""
    import imageio.v3 as iio

    from canter.cli.main import main
    from canter.cli.video import FrameVideoRecorder

    run = tmp_path / "pong"
    assert main(["train", "atari-pong", "--num-envs", "2", "--max-iterations", "1", "--run-dir", str(run),
                 "--env.max-episode-frames", "400", "--agent.algo.num-steps-per-env", "8", "--quiet"]) == 0
    capture = FrameVideoRecorder.capture

    def capture_then_ctrl_c(self):
        capture(self)
        if self.frames == 5:
            raise KeyboardInterrupt

    monkeypatch.setattr(FrameVideoRecorder, "capture", capture_then_ctrl_c)
    monkeypatch.setenv("MUJOCO_GL", "egl")  # what play --video would set for its own process
    video = tmp_path / "pong.mp4"
    capsys.readouterr()
    with pytest.raises(KeyboardInterrupt):
        main(["play", str(run), "--steps", "50", "--num-envs", "2", "--video", str(video)])
    # rich may wrap the long temporary path anywhere, even inside a name: compare without whitespace
    assert f"videosofar:{video}(5frames" in "".join(capsys.readouterr().out.split())
    assert iio.improps(video).shape[1:] == (336, 336, 3)
    assert sum(1 for _ in iio.imiter(video)) == 5



def test_play_stopped_by_sigterm_keeps_the_video_and_a_failed_play_keeps_the_old_one(tmp_path, capsys, monkeypatch):
    """SIGTERM during `canter play --video` ends the step under way: the frames so far are a readable mp4, the
    command ends "interrupted by SIGTERM" (exit 143). A play that fails leaves the video already at the path as it
    was, and no staged file behind."""
    import os
    import signal

    import imageio.v3 as iio

    from canter.cli.main import main
    from canter.cli.video import FrameVideoRecorder
    from canter.core.errors import Interrupted

    run = tmp_path / "pong"
    assert main(["train", "atari-pong", "--num-envs", "2", "--max-iterations", "1", "--run-dir", str(run),
                 "--env.max-episode-frames", "400", "--agent.algo.num-steps-per-env", "8", "--quiet"]) == 0
    capture = FrameVideoRecorder.capture
    monkeypatch.setenv("MUJOCO_GL", "egl")
    video = tmp_path / "pong.mp4"

    def capture_then(event):
        def patched(self):
            capture(self)
            if self.frames == 5:
                event()
        return patched

    monkeypatch.setattr(FrameVideoRecorder, "capture", capture_then(lambda: os.kill(os.getpid(), signal.SIGTERM)))
    capsys.readouterr()
    with pytest.raises(Interrupted) as stopped:
        main(["play", str(run), "--steps", "50", "--num-envs", "2", "--video", str(video)])
    assert stopped.value.signum == signal.SIGTERM
    out = " ".join(capsys.readouterr().out.split())
    assert f"video so far: {video} (5 frames" in out and "played 5 steps x 2 envs" in out
    assert sum(1 for _ in iio.imiter(video)) == 5
    before = video.read_bytes()

    def fail():
        raise RuntimeError("renderer lost")

    monkeypatch.setattr(FrameVideoRecorder, "capture", capture_then(fail))
    with pytest.raises(RuntimeError, match="renderer lost"):
        main(["play", str(run), "--steps", "50", "--num-envs", "2", "--video", str(video)])
    assert video.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["pong", "pong.mp4"]


def test_same_seed_same_training_on_two_emulator_threads(tmp_path):
    """Two runs of one seed with the games stepped on two emulator threads (ale-py's thread pool) and
    an iteration budget end in bitwise the same checkpoint (policy, Adam's state, the env's state): the
    thread pool returns every game's frames in the games' order, whichever thread stepped it."""
    from canter.cli.main import main
    from canter.rl.checkpoint import load_checkpoint
    from tests.rl.test_runner import _same

    checkpoints = []
    for name in ("a", "b"):
        run = tmp_path / name
        assert main(["train", "atari-pong", "--num-envs", "4", "--max-iterations", "2", "--run-dir", str(run),
                     "--env.num-threads", "2", "--env.max-episode-frames", "400",
                     "--agent.algo.num-steps-per-env", "8", "--quiet"]) == 0
        checkpoints.append(load_checkpoint(run / "checkpoint.pt"))
    assert _same(*checkpoints)
    # and both took every update: two iterations of 4 epochs x 8 minibatches
    assert all(float(entry["step"]) == 2 * 4 * 8 for entry in checkpoints[0]["algorithm"]["optimizer"]["state"].values())
