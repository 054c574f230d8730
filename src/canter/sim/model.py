"""Loading MJCF models, with one-line errors for broken files, and spec edits before compiling."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import mujoco

from canter.core.errors import CanterError

ASSETS_DIR = Path(__file__).resolve().parent.parent / "assets"

SpecEdit = Callable[[mujoco.MjSpec], None]


def asset_path(name: str) -> Path:
    """Path of one of Canter's own MJCF models in canter/assets."""
    return ASSETS_DIR / name


def load_spec(path: str | Path) -> mujoco.MjSpec:
    """Parse an MJCF file into an editable MjSpec; raises CanterError naming the file on failure."""
    path = Path(path)
    if not path.is_file():
        raise CanterError(f"model file not found: {path}")
    try:
        return mujoco.MjSpec.from_file(str(path))
    except Exception as err:  # MuJoCo raises ValueError with a multi-line message
        raise CanterError(f"broken MJCF {path}: {_first_line(err)}") from err


def compile_spec(spec: mujoco.MjSpec, origin: str | Path = "<spec>") -> mujoco.MjModel:
    """Compile an MjSpec; raises CanterError naming the origin on failure."""
    try:
        return spec.compile()
    except Exception as err:
        raise CanterError(f"cannot compile MJCF {origin}: {_first_line(err)}") from err


def load_model(
    path: str | Path, edits: tuple[SpecEdit, ...] = (), timestep: float | None = None
) -> mujoco.MjModel:
    """Load an MJCF file, apply spec edits (e.g. add the sensors a task needs) and compile it."""
    spec = load_spec(path)
    for edit in edits:
        edit(spec)
    if timestep is not None:
        spec.option.timestep = timestep
    return compile_spec(spec, path)


def keyframe_index(model: mujoco.MjModel, name: str, origin: str | Path = "the model") -> int:
    """Index of the keyframe `name`; raises CanterError listing the keyframes there are."""
    names = [model.key(i).name for i in range(model.nkey)]
    if name not in names:
        raise CanterError(f"{origin} has no keyframe {name!r} (have: {', '.join(names) or 'none'})")
    return names.index(name)


def _first_line(err: BaseException) -> str:
    text = str(err).strip().replace("\n", " ")
    return " ".join(text.split())
