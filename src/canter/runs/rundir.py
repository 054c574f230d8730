"""Run directories: creating one, its `command.json` and `config.yaml`, and rebuilding a run from them.

A run directory keeps `command.json` (what the run was started with: task, flags, overrides, process
count), `config.yaml` (the resolved env and agent configs, for people), `checkpoint.pt`, TensorBoard
event files, `progress.csv`, `training_curve.png` and `.lock` (canter.runs.lock). Both text files are
written atomically (temporary file + rename), so a full disk never leaves a cut-off file behind.
Resuming, evaluating and playing call build_train_args on the stored (task, flags, overrides).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import shlex
import signal
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from canter.core.errors import CanterError
from canter.core.files import WriteError, is_disk_full, write_text_atomic
from canter.runs.args import (
    RESUMABLE_FIELDS,
    RESUMABLE_FLAGS,
    TrainArgs,
    TrainFlags,
    build_train_args,
    changed_fields,
    make_overrides,
    parse,
    parse_overrides,
    to_plain,
)
from canter.runs.lock import LOCK_FILE, RunLock
from canter.runs.parsing import without_env_overrides

COMMAND_FILE = "command.json"
CONFIG_FILE = "config.yaml"
CHECKPOINT_FILE = "checkpoint.pt"  # canter.rl.runner.CHECKPOINT, named here without importing torch


@dataclass(kw_only=True)
class RunCommand:
    """What `command.json` holds: enough to rebuild the run's TrainArgs without re-reading argv."""

    task: str
    flags: TrainFlags = field(default_factory=TrainFlags)
    overrides: list[str] = field(default_factory=list)  # --env.* / --agent.* tokens, as typed
    nproc: int = 1  # 0: not recorded (a version 1 command.json); the checkpoint then tells
    dist_timeout: float = 300.0

    def train_args(self, *, env_overrides: bool = True) -> TrainArgs:
        """The run's TrainArgs; env_overrides=False: its task's env as registered (its --agent.* overrides kept)."""
        overrides = self.overrides if env_overrides else without_env_overrides(self.overrides)
        return build_train_args(self.task, self.flags, overrides, dist_timeout=self.dist_timeout)

    def to_json(self) -> str:
        return json.dumps({"version": 2, "task": self.task, "flags": dataclasses.asdict(self.flags),
                           "overrides": self.overrides, "nproc": self.nproc, "dist_timeout": self.dist_timeout}, indent=2)


@dataclass(kw_only=True)
class _LegacyFlags(TrainFlags):
    """Flags an old (version 1) command.json's argv may hold besides TrainFlags."""

    run_dir: str | None = None
    dist_timeout: float = 300.0


def check_writable_file(path: Path) -> None:
    """A file can be written at path (its folder is created); else one CanterError naming it."""
    folder = path.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise CanterError(f"cannot write {path}: {err.strerror or err}") from None
    if path.is_dir():
        raise CanterError(f"cannot write {path}: it is a directory")
    if not os.access(folder, os.W_OK | os.X_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise CanterError(f"cannot write {path}: permission denied")


def make_folder(path: Path, what: str) -> None:
    """Creates the folder `path` with its parents; a failure is one CanterError naming `what`."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        reason = "disk full" if is_disk_full(err) else err.strerror or err
        raise CanterError(f"cannot create {what}: {reason}") from None


def prepare_out_dir(path: Path, flag: str = "--out") -> Path | None:
    """Creates the output folder `path` before any work is done, so that one that cannot be written fails
    at once with one CanterError, not after minutes of benchmark. Returns the outermost folder this call
    created (None if `path` existed), for `remove_empty_out_dir`."""
    if path.exists() and not path.is_dir():
        raise CanterError(f"{flag} {path} is a file, not a directory")
    missing = [folder for folder in (path, *path.parents) if not folder.exists()]
    make_folder(path, f"{flag} {path}")
    if not os.access(path, os.W_OK | os.X_OK):
        raise CanterError(f"cannot write to {flag} {path}: permission denied")
    return missing[-1] if missing else None


def remove_empty_out_dir(path: Path, created: Path) -> None:
    """Removes `path` and its parents up to `created` (prepare_out_dir's result) while they are empty."""
    for folder in (path, *path.parents):
        try:
            folder.rmdir()
        except OSError:
            return
        if folder == created:
            return


def default_run_dir(task: str) -> Path:
    return Path("runs") / f"{task}-{time.strftime('%Y%m%d-%H%M%S')}"


def check_new_run_dir(path: Path) -> None:
    """A new run may use `path` only if it does not exist or holds nothing but a lock file."""
    if path.exists() and not path.is_dir():
        raise CanterError(f"--run-dir {path} is a file, not a directory")
    if path.is_dir() and any(entry.name != LOCK_FILE for entry in path.iterdir()):
        raise CanterError(f"run directory {path} exists and is not empty (use --resume {path} to continue it)")
    if not path.exists():  # found now, not after the env is built: the folder is made only once it is
        existing = next(folder for folder in path.absolute().parents if folder.exists())
        if not existing.is_dir():
            raise CanterError(f"cannot create run directory {path}: {existing} is a file")
        if not os.access(existing, os.W_OK | os.X_OK):
            raise CanterError(f"cannot create run directory {path}: {existing} is not writable")


def make_run_dir(path: Path) -> Path:
    check_new_run_dir(path)
    make_folder(path, f"run directory {path}")
    return path


def write_run_files(run_dir: Path, command: RunCommand, args: TrainArgs) -> None:
    import yaml

    write_text_atomic(run_dir / COMMAND_FILE, command.to_json() + "\n")
    resolved = {"task": command.task, "seed": args.seed, "env": to_plain(args.env), "agent": to_plain(args.agent)}
    write_text_atomic(run_dir / CONFIG_FILE, yaml.safe_dump(resolved, sort_keys=False))


def read_command(run_dir: str | Path) -> RunCommand:
    """The RunCommand of a run directory (CanterError if it is none, or its command.json is corrupt)."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise CanterError(f"no run directory at {run_dir}")
    path = run_dir / COMMAND_FILE
    if not path.is_file():
        raise CanterError(f"{run_dir} is not a Canter run directory (no {COMMAND_FILE})")
    try:
        data = json.loads(path.read_text())
        if "argv" in data:  # version 1: the train argv as typed
            flags, overrides = parse(_LegacyFlags, [str(a) for a in data["argv"]], prog="command.json", unknown=True)
            plain = {f.name: getattr(flags, f.name) for f in dataclasses.fields(TrainFlags)}
            return RunCommand(task=str(data["task"]), flags=TrainFlags(**plain), overrides=overrides, nproc=0,
                              dist_timeout=flags.dist_timeout)
        return RunCommand(task=str(data["task"]), flags=TrainFlags(**data["flags"]),
                          overrides=[str(t) for t in data["overrides"]], nproc=int(data.get("nproc", 1)),
                          dist_timeout=float(data.get("dist_timeout", 300.0)))
    except (OSError, ValueError, KeyError, TypeError, CanterError) as err:
        raise CanterError(f"corrupt {path}: {' '.join(str(err).split())}") from None


def resumed_command(saved: RunCommand, flags: TrainFlags, overrides: list[str], nproc: int) -> RunCommand:
    """The command of a resumed run: the saved one with this call's budget and logging on top.

    Flags that would change the trajectory (env count, seed, device, backend, algorithm, model, any
    other config field) raise a CanterError saying why; the saved budget is kept unless overridden.
    """
    if saved.nproc and nproc != saved.nproc:
        raise CanterError(f"--nproc: the run was written by {saved.nproc} process(es), this call has {nproc}: "
                          f"resume with --nproc {saved.nproc}")
    new_flags = dataclasses.replace(saved.flags)
    base = saved.train_args()
    resolved = {"num_envs": base.env.num_envs, "device": base.device, "backend": base.backend, "seed": base.seed,
                "algo": base.agent.algo.algo, "model": getattr(base.env, "model_path", None)}
    for f in dataclasses.fields(TrainFlags):
        value = getattr(flags, f.name)
        if f.name == "init_fresh_optimizer":  # how a new run starts; a resumed one continues its own optimizer
            if value:
                raise CanterError("--init-fresh-optimizer: not on resume (the run continues from its own checkpoint's optimizer)")
            continue
        if f.name in RESUMABLE_FLAGS:
            if value is not None and value != f.default:
                setattr(new_flags, f.name, value)
        elif value is not None and value != resolved[f.name]:
            flag = "--" + f.name.replace("_", "-")
            raise CanterError(f"{flag} cannot change on resume (the run was trained with {resolved[f.name]!r}; "
                              f"{value!r} would change its trajectory)")
    if overrides:
        base = saved.train_args()
        before = {"env": to_plain(base.env), "agent": to_plain(base.agent)}
        after_configs = parse_overrides(saved.task, overrides, make_overrides(base.env, base.agent))
        after = {"env": to_plain(after_configs.env), "agent": to_plain(after_configs.agent)}
        refused = [name for name in changed_fields(before, after) if name not in RESUMABLE_FIELDS]
        if refused:
            raise CanterError(f"--{refused[0].replace('_', '-')} cannot change on resume: it would change the run's "
                              "trajectory (start a new run instead)")
    return RunCommand(task=saved.task, flags=new_flags, overrides=[*saved.overrides, *overrides], nproc=nproc,
                      dist_timeout=saved.dist_timeout)


@dataclass(kw_only=True)
class Plan:
    """What a `canter train` call will do: the run's command, where, and whether it resumes."""

    command: RunCommand
    args: TrainArgs
    run_dir: Path
    resume: bool


def resume_command(run_dir: Path, nproc: int = 1) -> str:
    """`canter train --resume RUN_DIR`; a run of `nproc` > 1 processes resumes only with as many, so it
    says `--nproc N`."""
    return f"canter train --resume {shlex.quote(str(run_dir))}" + (f" --nproc {nproc}" if nproc > 1 else "")


def resume_line(run_dir: Path, signum: int, iteration: int | None, nproc: int = 1) -> str:
    """The line an interrupted run ends with; iteration None: no checkpoint was written yet."""
    name = signal.Signals(signum).name
    resume = resume_command(run_dir, nproc)
    if iteration is None:
        return f"interrupted by {name} before the first checkpoint; resume with: {resume} (it starts at iteration 0)"
    return f"interrupted by {name} at iteration {iteration}; checkpoint saved; resume with: {resume}"


def kept_after_write_failure(run_dir: Path, iteration: int | None, nproc: int = 1) -> str:
    """What a run that could not write a file (a full disk) still has, and how to go on: appended to
    the WriteError's line. iteration: that of the checkpoint on disk (None: none was written)."""
    resume = resume_command(run_dir, nproc)
    if iteration is None:
        return f"no checkpoint was written yet; make room, then: {resume} (it starts at iteration 0)"
    return f"{run_dir / CHECKPOINT_FILE} keeps iteration {iteration}; make room, then: {resume}"


def saved_iteration(run_dir: Path) -> int | None:
    """The iteration of the checkpoint in `run_dir`, None where there is none (or it cannot be read)."""
    from canter.rl.checkpoint import load_checkpoint

    try:
        return int(load_checkpoint(run_dir / CHECKPOINT_FILE)["iteration"])
    except (CanterError, KeyError, TypeError, ValueError):
        return None


@contextlib.contextmanager
def telling_what_is_kept(run_dir: Path, nproc: int = 1) -> Iterator[None]:
    """Around a run's training: a WriteError (a full disk) gets what the run still has and how to go
    on appended to its line (kept_after_write_failure)."""
    try:
        yield
    except WriteError as err:
        raise WriteError(f"{err}; {kept_after_write_failure(run_dir, saved_iteration(run_dir), nproc)}") from err


def create_run_dir(run_dir: Path, lock_text: str, fill: Callable[[], None] | None = None) -> RunLock:
    """Creates a new run's directory, locks it and runs `fill` (writes the run's files). Where that
    fails (a full disk), what this made goes again (the files, and the folder unless it was there
    before), so a run that never started leaves nothing behind."""
    existed = run_dir.is_dir()
    lock_existed = (run_dir / LOCK_FILE).exists()
    make_run_dir(run_dir)
    lock: RunLock | None = None
    try:
        lock = RunLock(run_dir).acquire(lock_text)
        if fill is not None:
            fill()
    except CanterError:
        if lock is not None:
            lock.release()
        for name in (COMMAND_FILE, CONFIG_FILE) + (() if lock_existed else (LOCK_FILE,)):
            (run_dir / name).unlink(missing_ok=True)
        if not existed:
            with contextlib.suppress(OSError):
                run_dir.rmdir()
        raise
    return lock
