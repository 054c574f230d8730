"""`python -m canter.train TASK [options]`: `canter train` as a module, the entry point torchrun
starts once per rank:

    torchrun --nproc-per-node 2 -m canter.train ant --num-envs 2048

Each rank joins the process group torchrun set up (gloo on the CPU, NCCL on CUDA), builds its own
share of the envs with its own seed and trains; rank 0 alone logs and writes checkpoints. Without
torchrun it trains in one process, exactly like `canter train`.
"""

from __future__ import annotations

import sys

from canter.cli.main import entrypoint


def main() -> None:
    entrypoint(["train", *sys.argv[1:]])


if __name__ == "__main__":
    main()
