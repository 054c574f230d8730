"""§16: what Canter's Atari env adds to the emulators per step. Times `AtariEnv.step` on Pong with
random action rows for SECONDS and splits it into the time inside ale-py's vector env (send and
recv: the emulators, their frame skip, max-pool, resize and stack) and the rest (Canter's torch and
numpy work). Usage: python overhead.py [NUM_ENVS ...] (default 16 64 256), one process, nothing else
running."""

from __future__ import annotations

import sys
import time

import torch

from canter.envs.atari import AtariEnv, AtariEnvCfg

SECONDS = 10.0


class _TimedVectorEnv:
    """The env's ale-py vector interface with the seconds spent in send and recv added up."""

    def __init__(self, ale) -> None:
        self.ale, self.seconds = ale, 0.0

    def send(self, *args):
        start = time.perf_counter()
        self.ale.send(*args)
        self.seconds += time.perf_counter() - start

    def recv(self):
        start = time.perf_counter()
        result = self.ale.recv()
        self.seconds += time.perf_counter() - start
        return result


def measure(num_envs: int) -> None:
    env = AtariEnv(AtariEnvCfg(game="pong", num_envs=num_envs))
    env.reset()
    generator = torch.Generator().manual_seed(0)
    timed = _TimedVectorEnv(env.ale)
    env.ale = timed  # type: ignore[assignment]
    with torch.inference_mode():
        for _ in range(50):  # warm-up
            env.step(torch.rand(num_envs, env.num_actions, generator=generator))
        timed.seconds, steps, start = 0.0, 0, time.perf_counter()
        while time.perf_counter() - start < SECONDS:
            env.step(torch.rand(num_envs, env.num_actions, generator=generator))
            steps += 1
        total = time.perf_counter() - start
    env.close()
    rest = total - timed.seconds
    print(f"{num_envs} games: step {total / steps * 1e3:.3f} ms, in ale-py {timed.seconds / steps * 1e3:.3f} ms, "
          f"Canter's own {rest / steps * 1e3:.3f} ms ({rest / total:.1%})")


if __name__ == "__main__":
    for n in [int(a) for a in sys.argv[1:]] or [16, 64, 256]:
        measure(n)
