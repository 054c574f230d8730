"""The Atari update's minibatch step (Nature CNN, 256 frames of 4x84x84 uint8, bfloat16 autocast, Adam)
with the uint8 frames scaled in float32 and then cast by the first convolution (the code before b74feac)
against scaled straight into bfloat16 (b74feac: canter.rl.encoders._input_dtype), interleaved in one
process so that the VM's drift hits both alike: 15 rounds of 8 steps each way, after 5 warm-up steps.
The glibc heap is kept as training keeps it for image policies (canter.core.heap).

    python docs/bench/atari/bf16_input/ab_step.py
"""

import statistics
import time

import torch

import canter.rl.encoders as encoders
from canter.core.heap import retain_freed_memory
from canter.rl.factory import make_policy
from canter.tasks.atari import atari_agent_cfg

retain_freed_memory()
policy = make_policy({"policy": (4, 84, 84)}, 6, atari_agent_cfg().policy, init_generator=torch.Generator().manual_seed(0))
optimizer = torch.optim.Adam(policy.parameters(), lr=2.5e-4)
frames = torch.randint(0, 256, (256, 4, 84, 84), dtype=torch.uint8, generator=torch.Generator().manual_seed(1))
ways = {"float32 scale, then cast": lambda images: torch.float32, "bfloat16 scale": encoders._input_dtype}


def step() -> None:
    with torch.autocast("cpu", dtype=torch.bfloat16):
        mean, _, values = policy.forward_train({"policy": frames}, None, None, None)
    loss = mean.float().logsumexp(-1).mean() + values.float().square().mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


times: dict[str, list[float]] = {name: [] for name in ways}
for way in ways.values():
    encoders._input_dtype = way
    for _ in range(5):
        step()
for _ in range(15):
    for name, way in ways.items():
        encoders._input_dtype = way
        start = time.perf_counter()
        for _ in range(8):
            step()
        times[name].append((time.perf_counter() - start) / 8 * 1e3)
old, new = times.values()
ratios = sorted(a / b for a, b in zip(old, new, strict=True))
print(f"ms per minibatch step, median of 15 rounds: {statistics.median(old):.1f} (float32 scale, then cast), "
      f"{statistics.median(new):.1f} (bfloat16 scale); paired ratio median {statistics.median(ratios):.3f} "
      f"(range {ratios[0]:.3f}-{ratios[-1]:.3f}); torch {torch.__version__}, {torch.get_num_threads()} threads")
