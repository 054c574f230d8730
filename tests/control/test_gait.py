"""Gait scheduler: phases, offsets, stance/swing split and progress, exactly."""

from __future__ import annotations

import pytest
import torch

from canter.control.gait import TROT, GaitCfg, GaitScheduler
from canter.core.errors import ConfigError

F64 = torch.float64


def _gait(num_envs: int = 3, **fields) -> GaitScheduler:
    return GaitScheduler(GaitCfg(**fields), num_envs, torch.device("cpu"), F64)


def test_trot_pairs_diagonal_legs_half_a_cycle_apart():
    gait = _gait(frequency=2.0, duty_factor=0.5, offsets=TROT)
    gait.advance(0.05)  # φ = 0.05 * 2 = 0.1
    torch.testing.assert_close(gait.leg_phase[0], torch.tensor([0.1, 0.6, 0.6, 0.1], dtype=F64))
    assert gait.stance[0].tolist() == [True, False, False, True]
    gait.advance(0.25)  # φ = 0.6: the other pair is on the ground
    torch.testing.assert_close(gait.phase, torch.full((3,), 0.6, dtype=F64))
    assert gait.stance[0].tolist() == [False, True, True, False]


def test_phase_speed_scales_the_advance_per_env_and_wraps():
    gait = _gait(frequency=2.5, speed_range=(0.5, 1.5))
    gait.advance(0.1, torch.tensor([1.0, 0.5, 3.0], dtype=F64))  # the last one is clamped to 1.5
    torch.testing.assert_close(gait.phase, torch.tensor([0.25, 0.125, 0.375], dtype=F64))
    torch.testing.assert_close(gait.cycle_time, torch.tensor([0.4, 0.8, 1.0 / 3.75], dtype=F64))
    for _ in range(3):
        gait.advance(0.1, torch.tensor([1.0, 0.5, 1.5], dtype=F64))
    # 0.25 * 4 = 1.0 -> 0.0; 0.125 * 4 = 0.5; 0.375 * 4 = 1.5 -> 0.5
    torch.testing.assert_close(gait.phase, torch.tensor([0.0, 0.5, 0.5], dtype=F64), atol=1e-12, rtol=0)


def test_swing_and_stance_progress_and_durations():
    gait = _gait(num_envs=1, frequency=1.0, duty_factor=0.6, offsets=(0.0, 0.25, 0.5, 0.75))
    gait.advance(0.1)  # leg phases 0.1, 0.35, 0.6, 0.85
    assert gait.stance[0].tolist() == [True, True, False, False]
    torch.testing.assert_close(gait.stance_progress[0], torch.tensor([0.1 / 0.6, 0.35 / 0.6, 1.0, 1.0], dtype=F64))
    torch.testing.assert_close(gait.swing_progress[0], torch.tensor([0.0, 0.0, 0.0, 0.25 / 0.4], dtype=F64))
    torch.testing.assert_close(gait.swing_duration(), torch.tensor([0.4], dtype=F64))
    torch.testing.assert_close(gait.stance_duration(), torch.tensor([0.6], dtype=F64))


def test_reset_restarts_only_the_given_envs_and_state_round_trips():
    gait = _gait()
    gait.advance(0.1, torch.tensor([1.0, 1.2, 0.8], dtype=F64))
    saved = gait.state_dict()
    gait.reset(torch.tensor([1]))
    assert gait.phase[1] == 0.0 and gait.phase[0] > 0 and gait.speed[1] == 1.0
    other = _gait()
    other.load_state_dict(saved)
    torch.testing.assert_close(other.phase, saved["phase"])


@pytest.mark.parametrize("fields", [{"frequency": 0.0}, {"duty_factor": 1.0}, {"speed_range": (0.0, 1.0)}])
def test_bad_config_names_the_field(fields):
    with pytest.raises(ConfigError, match="gait"):
        GaitCfg(**fields)
