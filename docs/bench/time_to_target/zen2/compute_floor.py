"""BENCHMARKS §15 (the Zen 2 paragraphs): how close the learners' gradient steps are to what the two cores compute.
Times, in bare torch on 2 threads (median of 50 after 10 warm-up steps), one forward and backward of
- dog-flat's two 256-128-64 ELU MLPs (actor 48 -> 12, critic 57 -> 1) over a minibatch of 3,072 rows, and
- the Nature CNN (32 8x8/4, 64 4x4/2, 64 3x3/1, 512 features) over 256 stacked 4x84x84 frames, Pong's minibatch,
  in contiguous and in channels-last memory.
With --bf16, each again under bfloat16 autocast (the update's `--agent.algo.autocast bf16`), to see whether this
CPU computes bfloat16 in hardware: on AVX2, or on AVX-512 without AVX512-BF16, oneDNN emulates it and it is slower.
Usage: python docs/bench/time_to_target/zen2/compute_floor.py [--bf16]"""
import statistics
import sys
import time

import torch
from torch import nn


def median_ms(step, repeats: int = 50, warmup: int = 10) -> float:
    times = []
    for i in range(warmup + repeats):
        start = time.perf_counter()
        step()
        if i >= warmup:
            times.append(time.perf_counter() - start)
    return 1e3 * statistics.median(times)


def mlp(inputs: int, outputs: int) -> nn.Module:
    return nn.Sequential(nn.Linear(inputs, 256), nn.ELU(), nn.Linear(256, 128), nn.ELU(), nn.Linear(128, 64), nn.ELU(),
                         nn.Linear(64, outputs))


def nature_cnn(actions: int = 6) -> nn.Module:
    return nn.Sequential(nn.Conv2d(4, 32, 8, 4), nn.ReLU(), nn.Conv2d(32, 64, 4, 2), nn.ReLU(), nn.Conv2d(64, 64, 3, 1),
                         nn.ReLU(), nn.Flatten(), nn.Linear(3136, 512), nn.ReLU(), nn.Linear(512, actions + 1))


def main() -> None:
    torch.set_num_threads(2)
    torch.manual_seed(0)
    actor, critic = mlp(48, 12), mlp(57, 1)
    xa, xc = torch.randn(3072, 48), torch.randn(3072, 57)
    frames = torch.randint(0, 255, (256, 4, 84, 84), dtype=torch.uint8).float() / 255
    for dtype in ("float32", "bfloat16") if "--bf16" in sys.argv[1:] else ("float32",):
        suffix = "" if dtype == "float32" else ", bfloat16 autocast"

        def autocast(dtype=dtype) -> torch.autocast:
            return torch.autocast("cpu", dtype=torch.bfloat16, enabled=dtype == "bfloat16")

        def mlp_step() -> None:
            with autocast():
                loss = actor(xa).float().square().mean() + critic(xc).float().square().mean()
            loss.backward()

        print(f"dog-flat MLPs, 3,072 rows, forward + backward{suffix}: {median_ms(mlp_step):.1f} ms")
        for name, fmt in (("contiguous", torch.contiguous_format), ("channels-last", torch.channels_last)):
            net, x = nature_cnn().to(memory_format=fmt), frames.contiguous(memory_format=fmt)

            def cnn_step(net=net, x=x) -> None:
                with autocast():
                    loss = net(x).float().square().mean()
                loss.backward()

            print(f"Nature CNN, 256 frames, forward + backward, {name}{suffix}: "
                  f"{median_ms(cnn_step, repeats=10, warmup=2):.0f} ms")


if __name__ == "__main__":
    main()
