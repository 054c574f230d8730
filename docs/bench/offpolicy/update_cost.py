"""What one gradient update of FastTD3's published configuration costs on this CPU, against the
scaled-down learner of fasttd3.py, so that the env steps/s either can reach follow from the
measurement: the update's seconds × updates per env step, plus the physics.

Published (Seo et al. 2025, their default for locomotion): actor 512-256-128, twin distributional critics
1024-512-256 with 101 atoms (C51), batch 32,768, 2 updates per env step of 1,024 envs. The distributional
loss is timed as a cross-entropy against a target distribution of the same shape (the categorical
projection is a handful of elementwise ops per atom, small against the matmuls).

    python docs/bench/offpolicy/update_cost.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import torch
from fasttd3 import mlp  # this folder's prototype: the same layers


def time_update(pdim: int, cdim: int, adim: int, actor_hidden: tuple[int, ...], critic_hidden: tuple[int, ...],
                atoms: int, batch: int, repeats: int) -> float:
    """Median seconds of one TD3 update (target, twin critic step, and the delayed actor step every
    other update, counted as half) on random data."""
    actor, actor_t = mlp(pdim, actor_hidden, adim), mlp(pdim, actor_hidden, adim)
    critics = [mlp(cdim + adim, critic_hidden, atoms) for _ in range(2)]
    targets = [mlp(cdim + adim, critic_hidden, atoms) for _ in range(2)]
    critic_opt = torch.optim.AdamW([p for c in critics for p in c.parameters()], lr=3e-4)
    actor_opt = torch.optim.AdamW(actor.parameters(), lr=3e-4)
    p, c, a = torch.randn(batch, pdim), torch.randn(batch, cdim), torch.randn(batch, adim)

    def loss_of(out: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        if atoms == 1:
            return ((out.squeeze(-1) - target.squeeze(-1)) ** 2).mean()
        return -(target.softmax(-1) * out.log_softmax(-1)).sum(-1).mean()

    times = []
    for step in range(repeats + 2):
        start = time.perf_counter()
        with torch.no_grad():
            an = torch.tanh(actor_t(p))
            x = torch.cat([c, an], -1)
            target = torch.minimum(targets[0](x), targets[1](x))
        x = torch.cat([c, a], -1)
        loss = sum(loss_of(critic(x), target) for critic in critics)
        critic_opt.zero_grad()
        loss.backward()
        critic_opt.step()
        critic_s = time.perf_counter() - start
        start = time.perf_counter()
        q = critics[0](torch.cat([c, torch.tanh(actor(p))], -1))
        actor_loss = -q.mean()
        actor_opt.zero_grad()
        actor_loss.backward()
        actor_opt.step()
        actor_s = time.perf_counter() - start
        if step >= 2:
            times.append(critic_s + actor_s / 2)  # policy delay 2
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    torch.manual_seed(0)
    rows = {
        "published": dict(actor_hidden=(512, 256, 128), critic_hidden=(1024, 512, 256), atoms=101, batch=32768),
        "fasttd3.py": dict(actor_hidden=(256, 128, 64), critic_hidden=(256, 128, 64), atoms=1, batch=2048),
    }
    out = {}
    for name, row in rows.items():
        seconds = time_update(48, 57, 12, repeats=args.repeats, **row)  # dog-flat's policy/critic/action sizes
        out[name] = {**row, "update_s": seconds, "threads": torch.get_num_threads()}
        print(f"{name:12s} batch {row['batch']:6d}: {seconds * 1000:8.1f} ms per update", flush=True)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
