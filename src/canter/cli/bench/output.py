"""What every bench scenario does with its result before printing a table."""

from __future__ import annotations


def emit(result: dict, out: str | None, filename: str, as_json: bool) -> bool:
    """Writes `OUT/filename` when --out is given, else prints the JSON with --json; True when one of
    them was done (the scenario then prints no table)."""
    import json
    from pathlib import Path

    if out is not None:
        Path(out).mkdir(parents=True, exist_ok=True)
        (Path(out) / filename).write_text(json.dumps(result, indent=2))
        return True
    if as_json:
        print(json.dumps(result, indent=2))
        return True
    return False


def is_other_rank() -> bool:
    """After a bench ran as one rank of torch.distributed (or alone): shut the process group down and
    say whether this process is a rank other than 0, which then prints and writes nothing."""
    from canter.rl.distributed import info, shutdown

    is_main = info().is_main
    shutdown()
    return not is_main
