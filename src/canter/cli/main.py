"""The `canter` command: one tyro command tree, `canter <command> [subcommand] [TASK] [--flags]`.

Every verb and bench scenario is a dataclass of this tree (their modules import nothing heavy; each
command's `run` imports what it needs), so `canter --help` is quick and every command shares one help
style. Conventions: a task is the positional TASK wherever a command takes one; `--out` is always a
directory, made before the command starts (one that cannot be made or written fails at once, before
any work); a training time budget is `--max-time SECONDS`; `--nproc` is an int. `canter train` and
the bench scenarios that train (`bench train`, `bench scaling`, `bench gradsync`) pass `--env.*` /
`--agent.*` overrides (and, for bench, the train flags) on to the task's configs.

Errors a user can cause (unknown task, bad flag value, broken model, missing run) end in one line on
stderr and exit code 2; anything unexpected in one line and exit code 1 (CANTER_DEBUG=1 shows the
traceback).
"""

from __future__ import annotations

import dataclasses
import os
import signal
import sys
from typing import Annotated, Any, Union

from canter.cli.bench import SCENARIOS, BenchCmd
from canter.cli.export_cmd import DeployCmd, ExportArgs
from canter.cli.list_cmd import ListArgs
from canter.cli.train_cmd import EvalArgs, PlayArgs, TrainCmd
from canter.core.errors import CanterError, Interrupted
from canter.core.heap import heap_mode
from canter.core.signals import closed_pipe_raises
from canter.runs.parsing import stray_options


def _command_type() -> Any:
    import tyro

    sub = tyro.conf.subcommand
    return Union[  # noqa: UP007 - tyro reads the Union
        Annotated[ListArgs, sub("list")],
        Annotated[TrainCmd, sub("train")],
        Annotated[PlayArgs, sub("play")],
        Annotated[EvalArgs, sub("eval")],
        Annotated[ExportArgs, sub("export")],
        Annotated[DeployCmd, sub("deploy")],
        Annotated[BenchCmd, sub("bench")],
    ]


COMMANDS = ("list", "train", "play", "eval", "export", "deploy", "bench")


def parse_command(argv: list[str]) -> tuple[Any, list[str]]:
    """The command dataclass of argv and the tokens it leaves to pass on (overrides)."""
    import tyro

    from canter.runs.parsing import parse

    if argv and not argv[0].startswith("-") and argv[0] not in COMMANDS:
        raise CanterError(f"unknown command {argv[0]!r} (commands: {', '.join(COMMANDS)})")
    if argv[:1] == ["bench"] and len(argv) > 1 and not argv[1].startswith("-") and argv[1] not in SCENARIOS:
        raise CanterError(f"unknown benchmark {argv[1]!r} (have: {', '.join(SCENARIOS)})")
    if argv[:1] == ["train"] and len(argv) > 2 and not argv[1].startswith("-") and any(a in ("-h", "--help") for a in argv):
        from canter.cli.train_cmd import print_task_help

        print_task_help(argv[1])
        raise SystemExit(0)
    command, rest = parse(_command_type(), argv, prog="canter", unknown=True,
                          config=(tyro.conf.OmitSubcommandPrefixes, tyro.conf.OmitArgPrefixes))
    _clear_empty_positionals(command)
    return command, rest


def _clear_empty_positionals(command: Any) -> None:
    """tyro 1.0 fills an optional positional that was not given with the text '[]' when unknown
    arguments follow; such a field gets its default back."""
    for f in dataclasses.fields(command):
        value = getattr(command, f.name)
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            _clear_empty_positionals(value)
        elif value == "[]" and f.default is not dataclasses.MISSING:
            setattr(command, f.name, f.default)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv in ([], ["help"]):
        argv = ["--help"]
    try:
        command, rest = parse_command(argv)
    except SystemExit as exit_:  # --help
        return int(exit_.code or 0)
    while isinstance(command, BenchCmd):
        command = command.scenario
    _choose_gl(command)
    passes_on = getattr(command, "PASS_THROUGH", "none")
    bad = rest if passes_on == "none" else stray_options(rest) if passes_on == "overrides" else []
    if bad:
        hint = " (the task is the positional TASK, e.g. canter bench env ant)" if "--task" in bad else ""
        raise CanterError(f"unrecognized options: {' '.join(bad)}{hint}")
    out = getattr(command, "out", None)
    if not (isinstance(out, str) and out):
        return command.run(rest)
    from pathlib import Path

    from canter.runs.rundir import prepare_out_dir, remove_empty_out_dir

    created = prepare_out_dir(Path(out))
    try:
        return command.run(rest)
    except BaseException:
        if created is not None:  # folders this call made and the command left empty go again
            remove_empty_out_dir(Path(out), created)
        raise


def _choose_gl(command: Any) -> None:
    """Only `canter play --video` and `canter deploy run --video` render: they need MUJOCO_GL's platform chosen before mujoco is
    imported (EGL unless set). Every other command imports mujoco with GL off, so a broken GL setting
    (e.g. MUJOCO_GL=osmesa without libOSMesa, which makes `import mujoco` fail) cannot stop it; the
    variable itself is left as it was (for processes this one starts)."""
    if isinstance(command, PlayArgs | DeployCmd) and command.video:
        os.environ.setdefault("MUJOCO_GL", "egl")
        return
    if "mujoco" in sys.modules:
        return
    previous = os.environ.get("MUJOCO_GL")
    os.environ["MUJOCO_GL"] = "disable"
    try:
        import mujoco  # noqa: F401
    finally:
        if previous is None:
            os.environ.pop("MUJOCO_GL", None)
        else:
            os.environ["MUJOCO_GL"] = previous


def entrypoint(argv: list[str] | None = None) -> None:
    """The console script: runs main(argv) and turns errors into one line and an exit code.

    Under torchrun the line names the rank; a rank that failed because another rank died or stopped
    answering says so and exits with code 3, and a rank of a process group leaves with os._exit
    (no interpreter teardown that could wait on a dead peer).
    """
    prefix = f"rank {os.environ['RANK']}: " if int(os.environ.get("WORLD_SIZE", "1")) > 1 and "RANK" in os.environ else ""
    try:
        heap_mode()  # a bad CANTER_MALLOC is a one-line error before anything runs
        closed_pipe_raises()  # rich's consoles: a closed pipe ends quietly as SIGPIPE (below), not as exit 1
        code = main(argv)
    except CanterError as err:
        print(f"canter: error: {prefix}{err}", file=sys.stderr)
        code = 2
    except KeyboardInterrupt:
        print(f"canter: {prefix}interrupted", file=sys.stderr)
        code = 130
    except Interrupted as stop:  # stopped by a signal with nothing to report (e.g. a bench's launched ranks)
        print(f"canter: {prefix}{stop}", file=sys.stderr)
        code = 128 + stop.signum
    except BrokenPipeError:  # the output's reader went away (`| head`, a pager that quit): stop quietly
        from canter.core.signals import silence_output

        silence_output(sys.stdout, sys.stderr)
        code = 128 + signal.SIGPIPE
    except Exception as err:  # one line, not a traceback, unless asked for
        if os.environ.get("CANTER_DEBUG"):
            raise
        code = _report_unexpected(err, prefix)
    if prefix and code != 0:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


def _report_unexpected(err: Exception, prefix: str) -> int:
    from canter.core.files import is_disk_full
    from canter.runs.launch import PEER_FAILURE_EXIT

    message = " ".join(str(err).split())
    if isinstance(err, OSError) and is_disk_full(err):  # a write of no file of ours
        what = f"cannot write {err.filename}: disk full" if err.filename else f"disk full ({err.strerror})"
        print(f"canter: error: {prefix}{what}", file=sys.stderr)
        return 2
    if prefix and _is_peer_failure(err):
        print(f"canter: error: {prefix}another rank failed or stopped answering, stopping ({message[:200]})",
              file=sys.stderr)
        return PEER_FAILURE_EXIT
    print(f"canter: {prefix}internal error: {type(err).__name__}: {message} (CANTER_DEBUG=1 shows the traceback)",
          file=sys.stderr)
    return 1


def _is_peer_failure(err: BaseException) -> bool:
    from canter.rl.distributed import is_peer_failure

    return is_peer_failure(err)
