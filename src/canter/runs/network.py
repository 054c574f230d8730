"""A trained run's network sizes, read from its checkpoint rather than from today's defaults.

A run directory keeps the command the run was started with, not the network sizes the task's
defaults gave it then. Were a task's default network to change (BENCHMARKS.md §14 measured the
dog's at other sizes), a run trained before would be rebuilt with the new sizes and fail to load
its own checkpoint. So whatever rebuilds a trained run (resume, eval, play, export, a DAgger
teacher, the stepping-stone bench) takes the actor's and the critic's hidden sizes from the
checkpoint it loads, and a new run started `--init-from` another takes the source's (recorded in its
command, so that it resumes alike), unless its own command line sets them. Where only the sizes are
wanted, the checkpoint is memory-mapped: its shapes are read, not its (possibly large) tensors.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

import torch

from canter.core.errors import CanterError
from canter.rl.checkpoint import load_checkpoint
from canter.rl.config import PolicyCfg

ROLES = ("actor", "critic")
FLAGS = {role: f"--agent.policy.{role}-hidden-dims" for role in ROLES}


def saved_hidden_dims(policy_state: Mapping[str, torch.Tensor]) -> dict[str, tuple[int, ...]]:
    """{"actor": dims, "critic": dims}: the hidden widths of the MLPs in a policy's state_dict.

    build_mlp's layout: Linear layers at the even indices of `actor.` / `critic.`, the last one the
    output layer. A role whose parameters do not follow that layout is left out."""
    dims: dict[str, tuple[int, ...]] = {}
    for role in ROLES:
        pattern = re.compile(rf"{role}\.(\d+)\.weight")
        layers = sorted((int(match.group(1)), tuple(value.shape)) for key, value in policy_state.items()
                        if (match := pattern.fullmatch(key)))
        if not layers or [index for index, _ in layers] != list(range(0, 2 * len(layers), 2)):
            continue
        if any(len(shape) != 2 for _, shape in layers):
            continue
        dims[role] = tuple(int(shape[0]) for _, shape in layers[:-1])
    return dims


def adopt_network(policy_cfg: PolicyCfg, policy_state: Mapping[str, torch.Tensor]) -> None:
    """Sets policy_cfg's actor and critic hidden sizes to those of `policy_state` (a checkpoint's)."""
    for role, dims in saved_hidden_dims(policy_state).items():
        setattr(policy_cfg, f"{role}_hidden_dims", dims)


def adopt_saved_network(policy_cfg: PolicyCfg, checkpoint: str | Path) -> None:
    """adopt_network from the checkpoint file at `checkpoint`; nothing when there is none yet."""
    if Path(checkpoint).is_file():
        adopt_network(policy_cfg, load_checkpoint(checkpoint, mmap=True)["algorithm"]["policy"])


def source_network_overrides(task: str, source: str | Path, overrides: list[str]) -> list[str]:
    """The `--agent.policy.{actor,critic}-hidden-dims` tokens that give a new `--init-from source` run
    of `task` the source's network, for each role that `overrides` leaves at a different default (a
    linear head, no hidden layer, is the flag alone: an empty tuple). [] when the source has no
    checkpoint (the check that follows names it)."""
    from canter.runs.args import parse_overrides
    from canter.runs.init_from import checkpoint_path

    try:
        path, _ = checkpoint_path(source)
    except CanterError:
        return []
    saved = saved_hidden_dims(load_checkpoint(path, mmap=True)["algorithm"]["policy"])
    policy = parse_overrides(task, overrides).agent.policy
    tokens: list[str] = []
    for role, dims in saved.items():
        if any(token.split("=")[0] == FLAGS[role] for token in overrides):
            continue
        if tuple(getattr(policy, f"{role}_hidden_dims")) != dims:
            tokens += [FLAGS[role], *map(str, dims)]
    return tokens
