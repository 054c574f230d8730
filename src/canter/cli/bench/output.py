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
