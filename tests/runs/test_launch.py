"""The launcher: free ports, torchrun's command line, and which rank a failed launch blames."""

from __future__ import annotations

import signal
import socket
from types import SimpleNamespace

from canter.runs.launch import PEER_FAILURE_EXIT, describe_failure, free_port, torchrun_argv


def test_free_port_can_be_bound():
    port = free_port()
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", port))
    assert 0 < port < 65536


def test_torchrun_argv_runs_the_module_on_a_static_local_rendezvous():
    argv = torchrun_argv("canter.train", ["ant", "--num-envs", "8"], 2, 29511, "/tmp/logs")
    assert argv[argv.index("--nproc-per-node") + 1] == "2"
    assert argv[argv.index("--master-port") + 1] == "29511"
    assert argv[argv.index("--rdzv-backend") + 1] == "static"
    assert argv[argv.index("--max-restarts") + 1] == "0"
    assert argv[-5:] == ["-m", "canter.train", "ant", "--num-envs", "8"]


def _failure(exitcode: int, timestamp: int) -> SimpleNamespace:
    return SimpleNamespace(exitcode=exitcode, timestamp=timestamp)


def test_the_cause_is_blamed_not_the_ranks_stopped_because_of_it():
    # rank 0 noticed first (its peer vanished) and rank 2 was stopped by the agent; rank 1 was killed
    failures = {0: _failure(PEER_FAILURE_EXIT, 10), 1: _failure(-int(signal.SIGKILL), 11), 2: _failure(-int(signal.SIGTERM), 12)}
    assert describe_failure(failures) == "distributed run failed: rank 1 was killed by SIGKILL; rank(s) 0, 2 stopped too"
    raised = {3: _failure(1, 20), 0: _failure(-int(signal.SIGTERM), 19)}
    assert describe_failure(raised) == (
        "distributed run failed: rank 3 exited with code 1 (its error is printed above); rank(s) 0 stopped too"
    )
    assert describe_failure({1: _failure(-int(signal.SIGTERM), 5)}) == "distributed run failed: rank 1 was killed by SIGTERM"
