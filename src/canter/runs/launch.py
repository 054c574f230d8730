"""Starting N local ranks with torchrun's own launcher (torch.distributed.run), in this process.

`launch("canter.train", argv, nproc)` does what
`torchrun --nproc-per-node N --rdzv-backend static --master-addr 127.0.0.1 --master-port P -m canter.train ...`
does, with P a free port found here, and turns a failed rank into one CanterError naming it.
When a rank dies or raises, torchrun's agent stops the others (SIGTERM, then SIGKILL after its
shutdown timeout); a rank waiting in a collective on a dead peer also fails by itself, at once for a
closed connection and after `--dist-timeout` for a peer that stopped answering.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket
import tempfile
from collections.abc import Iterator

from canter.core.device import available_cores
from canter.core.errors import CanterError, Interrupted
from canter.core.signals import STOP_SIGNALS  # they stop a training run with a checkpoint (exit 128 + signum)
from canter.rl.distributed import CORES_VARIABLE

# exit code of a rank that stopped because another rank failed (see canter.cli.main.entrypoint)
PEER_FAILURE_EXIT = 3


class LaunchInterrupted(Interrupted):
    """The ranks were stopped by a signal (Ctrl-C reached them, or this process forwarded SIGTERM)."""


def interrupt_signal(failures: dict) -> int | None:
    """The signal that stopped every failed rank (exit code 128 + signum, or killed by it), else None."""
    signums = set()
    for failure in failures.values():
        code = failure.exitcode
        signum = code - 128 if code > 128 else -code
        if signum not in [int(s) for s in STOP_SIGNALS]:
            return None
        signums.add(signum)
    return min(signums) if signums else None


@contextlib.contextmanager
def _interrupts_reach_the_ranks() -> Iterator[None]:
    """Ctrl-C sends SIGINT to every process of the terminal's process group, the ranks included:
    this process lets them stop by themselves (a forwarded second signal would cut their checkpoint
    short). SIGTERM and SIGHUP sent to this process alone are forwarded by torchrun's agent."""
    previous = signal.signal(signal.SIGINT, lambda *_: None)
    try:
        with _environment({"TORCHELASTIC_SIGNALS_TO_HANDLE": "SIGTERM,SIGHUP,SIGQUIT"}):
            yield
    finally:
        signal.signal(signal.SIGINT, previous)


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nothing listens on right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def _quiet_torchrun() -> Iterator[None]:
    """torchrun's agent logs every signal it sends; we report failures ourselves. Its modules' loggers
    carry levels of their own (torch's elastic logging sets them), so each is quieted, not only the parent."""
    names = ["torch.distributed", *(name for name in logging.root.manager.loggerDict
                                    if name.startswith("torch.distributed."))]
    previous = {name: logging.getLogger(name).level for name in names}
    for name in names:
        logging.getLogger(name).setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        for name, level in previous.items():
            logging.getLogger(name).setLevel(level)


def torchrun_argv(module: str, module_argv: list[str], nproc: int, port: int, log_dir: str) -> list[str]:
    """The torchrun command line (after `torchrun`) that runs `python -m module module_argv` on
    nproc ranks of this machine."""
    return [
        "--nproc-per-node", str(nproc),
        "--rdzv-backend", "static",
        "--master-addr", "127.0.0.1",
        "--master-port", str(port),
        "--max-restarts", "0",
        "--log-dir", log_dir,
        "-m", module, *module_argv,
    ]  # fmt: skip


@contextlib.contextmanager
def _environment(values: dict[str, str]) -> Iterator[None]:
    """os.environ with `values` set (the ranks inherit it), restored afterwards."""
    previous = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in previous.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def launch(
    module: str, module_argv: list[str], nproc: int, port: int | None = None, cores_per_process: int | None = None,
    *, extra_env: dict[str, str] | None = None, stoppable: bool = False,
) -> int:
    """Runs `python -m module module_argv` as nproc ranks on this machine and waits for all of them.

    Returns the port used. cores_per_process: the threads of each rank's MuJoCo pool and learning
    (CANTER_CORES_PER_PROCESS, OMP_NUM_THREADS); None shares this machine's cores evenly. A rank that
    fails ends the launch with a CanterError naming the first rank that failed and how. stoppable:
    the ranks save and stop on SIGINT/SIGTERM/SIGHUP (training); a launch they stopped that way
    raises LaunchInterrupted. extra_env: more environment variables for the ranks.
    """
    from torch.distributed.elastic.multiprocessing import SignalException
    from torch.distributed.elastic.multiprocessing.errors import ChildFailedError
    from torch.distributed.launcher.api import elastic_launch
    from torch.distributed.run import config_from_args, parse_args

    if nproc < 1:
        raise CanterError(f"--nproc: must be >= 1, got {nproc}")
    if cores_per_process is not None and cores_per_process < 1:
        raise CanterError(f"--cores-per-process: must be >= 1, got {cores_per_process}")
    port = port or free_port()
    threads = {"OMP_NUM_THREADS": str(cores_per_process or max(1, available_cores() // nproc)), **(extra_env or {})}
    if cores_per_process is not None:
        threads[CORES_VARIABLE] = str(cores_per_process)
    interrupts = _interrupts_reach_the_ranks() if stoppable else contextlib.nullcontext()
    with tempfile.TemporaryDirectory(prefix="canter-torchrun-") as log_dir, _quiet_torchrun(), _environment(threads):
        config, command, command_args = config_from_args(parse_args(torchrun_argv(module, module_argv, nproc, port, log_dir)))
        try:
            with interrupts:
                elastic_launch(config, command)(*command_args)
        except SignalException as err:
            raise LaunchInterrupted(int(err.sigval)) from None
        except ChildFailedError as err:
            signum = interrupt_signal(err.failures) if stoppable else None
            if signum is not None:
                raise LaunchInterrupted(signum) from None
            raise CanterError(describe_failure(err.failures)) from None
    return port


def describe_failure(failures: dict) -> str:
    """One line naming the rank that caused a failed launch (failures: rank -> ProcessFailure).

    Ranks that were stopped by the agent (SIGTERM) or stopped because a peer failed are followers;
    the cause is the first other failure, by time."""
    followers = (-int(signal.SIGTERM), PEER_FAILURE_EXIT)
    ordered = sorted(failures.items(), key=lambda item: (item[1].exitcode in followers, item[1].timestamp, item[0]))
    rank, failure = ordered[0]
    code = failure.exitcode
    if code < 0:
        try:
            how = f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            how = f"was killed by signal {-code}"
    else:
        how = f"exited with code {code}" + (" (its error is printed above)" if code in (1, 2) else "")
    others = sorted(r for r in failures if r != rank)
    stopped = f"; rank(s) {', '.join(map(str, others))} stopped too" if others else ""
    return f"distributed run failed: rank {rank} {how}{stopped}"
