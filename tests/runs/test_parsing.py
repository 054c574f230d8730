"""One-line tyro errors: each parse failure names the flag and the problem in one line."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import pytest

from canter.core.errors import CanterError
from canter.runs.parsing import parse


@dataclass(kw_only=True)
class _Flags:
    max_iterations: int | None = None
    learning_rate: float = 1e-3
    nproc: int = 1
    backend: Literal["cpu", "warp"] = "cpu"
    algo: Literal["ppo", "a2c", "ga3c"] | None = None


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--max-iterations", "abc"], "--max-iterations: invalid value 'abc' (expected INT)"),
        (["--learning-rate", "abc"], "--learning-rate: invalid value 'abc' (expected a number)"),
        (["--nproc", "1.9"], "--nproc: invalid value '1.9' (expected an integer)"),
        (["--nosuch", "1"], "unrecognized options: --nosuch 1"),
        (["--backend", "foo"], "--backend: invalid choice 'foo' (expected one of: cpu, warp)"),
        # an optional flag: its unset default None is no choice to offer; the choices come sorted
        (["--algo", "foo"], "--algo: invalid choice 'foo' (expected one of: a2c, ga3c, ppo)"),
        (["--nproc"], "Missing value for argument '--nproc'"),
    ],
)
def test_every_parse_failure_is_one_canter_error_line(argv, message, capsys):
    with pytest.raises(CanterError) as err:
        parse(_Flags, argv, prog="canter test")
    assert str(err.value).startswith(message) and "\n" not in str(err.value)
    assert capsys.readouterr().err == ""  # tyro's box never reaches the terminal


@dataclass(kw_only=True)
class _Nested:
    seed: int = 0


@dataclass(kw_only=True)
class _WithSeeds:
    seed: int | None = None
    inner: _Nested


def test_a_negative_seed_anywhere_is_one_line_naming_its_flag():
    assert parse(_WithSeeds, ["--seed", "0", "--inner.seed", "7"], prog="canter test").inner.seed == 7
    with pytest.raises(CanterError, match=r"^--seed: must be >= 0, got -1$"):
        parse(_WithSeeds, ["--seed", "-1"], prog="canter test")
    with pytest.raises(CanterError, match=r"^--inner\.seed: must be >= 0, got -5$"):
        parse(_WithSeeds, ["--inner.seed", "-5"], prog="canter test")


def test_unknown_arguments_are_returned_when_asked_for():
    flags, rest = parse(_Flags, ["--nproc", "2", "--env.x", "3"], prog="canter test", unknown=True)
    assert flags.nproc == 2 and rest == ["--env.x", "3"]


def test_negative_numbers_are_override_values_not_options():
    from canter.runs.args import parse_train_args
    from canter.runs.parsing import stray_options

    assert stray_options(["--env.a.b", "-1", "1", "--agent.c", "-1e-3", "-.5", "--max-x", "-inf"]) == ["--max-x"]
    assert stray_options(["-v", "--nosuch"]) == ["-v", "--nosuch"]
    args = parse_train_args("dog-rough", ["--env.commands.base-velocity.lin-vel-x", "-1", "0.5",
                                          "--env.curriculum.command-range.params.max-lin-vel-x", "-1.5", "1"])
    assert args.env.commands["base_velocity"].lin_vel_x == (-1.0, 0.5)  # type: ignore[attr-defined]
    assert list(args.env.curriculum["command_range"].params["max_lin_vel_x"]) == [-1.5, 1.0]


def test_without_env_overrides_keeps_the_agent_options_and_their_values():
    from canter.runs.parsing import without_env_overrides

    tokens = ["--env.a.b", "-1", "1", "--agent.c", "-1e-3", "--env.d=2", "--agent.e.f=x", "--env.g", "--agent.h", "-.5", "3"]
    assert without_env_overrides(tokens) == ["--agent.c", "-1e-3", "--agent.e.f=x", "--agent.h", "-.5", "3"]
    assert without_env_overrides(["--env.a", "1"]) == [] and without_env_overrides([]) == []


def test_the_overrides_that_stand_for_device_and_backend_count_unless_the_flags_are_given():
    from canter.runs.args import TrainFlags, build_train_args

    args = build_train_args("cartpole", TrainFlags(), ["--env.sim.backend", "warp", "--env.device", "cuda:1"])
    assert (args.backend, args.env.sim.backend, args.device, args.env.device) == ("warp", "warp", "cuda:1", "cuda:1")
    args = build_train_args("cartpole", TrainFlags(backend="cpu", device="cpu"), ["--env.sim.backend", "warp",
                                                                                    "--env.device", "cuda:1"])
    assert (args.backend, args.env.sim.backend, args.device, args.env.device) == ("cpu", "cpu", "cpu", "cpu")
    args = build_train_args("cartpole", TrainFlags(), [])
    assert (args.backend, args.env.sim.backend, args.device, args.env.device) == ("cpu", "cpu", "cpu", "cpu")
    assert build_train_args("atari-pong", TrainFlags(), ["--env.device", "cuda:1"]).device == "cuda:1"


def test_the_scripts_parser_errs_in_one_line_with_exit_code_2(capsys):
    from canter.runs.parsing import ScriptParser

    parser = ScriptParser(prog="some_script.py")
    parser.add_argument("run_dir")
    parser.add_argument("--episodes", type=int, default=4)
    assert parser.parse_args(["RUN", "--episodes", "8"]).episodes == 8
    for argv, message in (([], "the following arguments are required: run_dir"),
                          (["RUN", "--episodes", "x"], "argument --episodes: invalid int value: 'x'"),
                          (["RUN", "--nosuch"], "unrecognized arguments: --nosuch")):
        with pytest.raises(SystemExit) as stop:
            parser.parse_args(argv)
        assert stop.value.code == 2
        assert capsys.readouterr().err == f"some_script.py: error: {message}\n"
