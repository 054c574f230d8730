"""What every bench scenario does with its result before printing a table."""

from __future__ import annotations

from pathlib import Path


def write_report(path: Path, result: dict) -> Path:
    """Writes `result` as indented JSON at `path` (its folder made), whole or not at all; a failure (a
    full disk) is one CanterError naming the file, not an internal error or a cut-off report."""
    import json

    from canter.core.files import write_text_atomic
    from canter.runs.rundir import make_folder

    make_folder(path.parent, str(path.parent))
    write_text_atomic(path, json.dumps(result, indent=2) + "\n")
    return path


def emit(result: dict, out: str | None, filename: str, as_json: bool) -> bool:
    """Writes `OUT/filename` when --out is given, else prints the JSON with --json; True when one of
    them was done (the scenario then prints no table)."""
    import json

    if out is not None:
        write_report(Path(out) / filename, result)
        return True
    if as_json:
        print(json.dumps(result, indent=2))
        return True
    return False


def stopped_exit_code(stopped_by: str | None) -> int:
    """The exit code of a bench that ran to its end (0) or was cut short by the signal named
    `stopped_by` (128 + its number; the bench still reports what it measured)."""
    import signal

    return 0 if stopped_by is None else 128 + int(signal.Signals[stopped_by])


def is_other_rank() -> bool:
    """After a bench ran as one rank of torch.distributed (or alone): shut the process group down and
    say whether this process is a rank other than 0, which then prints and writes nothing."""
    from canter.rl.distributed import info, shutdown

    is_main = info().is_main
    shutdown()
    return not is_main
