"""`canter play/eval RUN --command VX VY WZ`: every env of a velocity task commanded one velocity
for the whole run (a video of a robot walking out of a pit, a score at one speed): the run's command
term is replaced by a constant one, its command-range curriculum dropped, the terrain curriculum
kept; one-line errors for a task without a velocity command and a non-finite velocity."""

from __future__ import annotations

import json

import pytest
import torch

from canter.cli.main import main
from canter.core.errors import ConfigError
from canter.mdp.commands import ConstantVelocityCommandCfg
from canter.runs.args import apply_command
from canter.runs.load import load_run
from canter.tasks.dog.env_cfg import dog_rough_env_cfg

from .test_train import SMALL, _in_process, _one_error_line


def test_apply_command_holds_one_velocity_and_drops_the_command_curriculum():
    cfg = dog_rough_env_cfg()
    assert set(cfg.curriculum) == {"terrain_levels", "terrain_top_third", "command_range"}
    apply_command(cfg, (0.7, -0.1, 0.25))
    command = cfg.commands["base_velocity"]
    assert isinstance(command, ConstantVelocityCommandCfg) and command.velocity == (0.7, -0.1, 0.25)
    assert set(cfg.curriculum) == {"terrain_levels", "terrain_top_third"}
    with pytest.raises(ConfigError, match="velocity: need three finite numbers"):
        apply_command(dog_rough_env_cfg(), (float("nan"), 0.0, 0.0))


def test_a_command_outside_the_trained_ranges_gets_a_note_naming_them():
    from canter.tasks.dog.env_cfg import dog_flat_env_cfg

    assert apply_command(dog_flat_env_cfg(), (1.0, -1.0, 0.5)) is None  # the bounds themselves are trained on
    assert apply_command(dog_flat_env_cfg(), (2.0, 0.0, -3.0)) == (
        "--command vx 2 m/s, wz -3 rad/s: outside what this task trains on (vx [-1, 1], wz [-1, 1]); "
        "the policy never saw such a command")
    # dog-rough's command curriculum widens vx to its limit of ±1.5 m/s: 1.4 was trained on, 1.6 not
    assert apply_command(dog_rough_env_cfg(), (1.4, 0.0, 0.0)) is None
    assert apply_command(dog_rough_env_cfg(), (-1.6, 0.0, 0.0)) == (
        "--command vx -1.6 m/s: outside what this task trains on (vx [-1.5, 1.5]); the policy never saw such a command")


def test_play_and_eval_hold_the_command_through_resets(tmp_path, capfd):
    run = tmp_path / "dog"
    assert main(["train", "dog-flat", "--run-dir", str(run), *SMALL, "--max-iterations", "1"]) == 0
    capfd.readouterr()
    _, _, runner = load_run(run, num_envs=4, velocity=(0.6, 0.0, -0.3))
    env = runner.env
    obs, _ = env.reset()
    wanted = torch.tensor([0.6, 0.0, -0.3]).expand(4, 3)
    ended = torch.zeros(4, dtype=torch.bool)
    with torch.no_grad():
        for step in range(20):  # the task redraws at resets and every 10 s; a held command never changes
            if step == 10:
                env.episode_length_buf[:2] = env.max_episode_length - 1  # envs 0 and 1 time out now
            obs, _, terminated, truncated, _ = env.step(runner.algorithm.policy.act_inference(obs))
            ended |= terminated | truncated
            assert torch.equal(env.command_manager.get_command("base_velocity").cpu(), wanted)
    assert ended[:2].all()  # resets happened in between
    assert main(["eval", str(run), "--episodes", "2", "--num-envs", "2", "--command", "0.6", "0", "-0.3", "--json"]) == 0
    result = json.loads(capfd.readouterr().out)
    assert result["command"] == [0.6, 0.0, -0.3] and result["episodes"] == 2
    assert main(["play", str(run), "--num-envs", "2", "--steps", "3", "--command", "0.5", "0", "0"]) == 0
    cartpole = tmp_path / "cartpole"
    assert main(["train", "cartpole", "--run-dir", str(cartpole), *SMALL, "--max-iterations", "1"]) == 0
    line = _one_error_line(_in_process(capfd, "eval", str(cartpole), "--num-envs", "2", "--command", "1", "0", "0"))
    assert "--command: this task has no velocity command" in line
    line = _one_error_line(_in_process(capfd, "play", str(run), "--num-envs", "2", "--command", "nan", "0", "0"))
    assert "velocity: need three finite numbers" in line
