"""The stop signals: the first one is recorded and reported once, a second Ctrl-C stops at once, and
the previous handlers come back."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from canter.core.signals import STOP_SIGNALS, catch_stop_signals


def test_first_signal_is_recorded_once_and_a_second_ctrl_c_raises():
    before = {s: signal.getsignal(s) for s in STOP_SIGNALS}
    calls = []
    with catch_stop_signals(calls.append) as received:
        os.kill(os.getpid(), signal.SIGTERM)
        os.kill(os.getpid(), signal.SIGTERM)  # a repeat only repeats the request
        assert received == [signal.SIGTERM] and calls == [signal.SIGTERM]
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)
    assert {s: signal.getsignal(s) for s in STOP_SIGNALS} == before


def test_outside_the_main_thread_nothing_is_caught():
    seen = []

    def worker():
        with catch_stop_signals() as received:
            seen.append((received, signal.getsignal(signal.SIGTERM)))

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    assert seen == [([], signal.getsignal(signal.SIGTERM))]
