"""`canter train TASK --init-from RUN`: a new run that starts from another run's policy (fine-tuning,
or a curriculum of tasks: walk on flat ground, then learn stairs).

The source's actor, critic, action noise and observation normalizers are copied. Where this task's
policy reads a wider observation group than the source's (the stairs task's height scan appended to
the flat task's terms), the source's terms must be the first terms of the new group, with the same
functions, parameters, scale, clip and history; their columns keep the source's weights and the new
columns start at zero weight (normalized as identity), so the new policy acts exactly as the source
on the source's observations until it learns to use the new ones. The iteration count starts
afresh.

The source's optimizer state comes with the policy: Adam's moment estimates and step counts, and with
the adaptive schedule the learning rate the source's KL had settled on, as rsl_rl's `load` restores
the optimizer. A fresh Adam's first steps move every weight by about the learning rate in the sign of
its gradient, whatever that gradient's noise; on a trained policy that is a shake (measured on a
dog-flat policy grown to dog-rough's height scan: a KL of 2.1 and 19.6 in the first update, where the
KL then settles near its target of 0.02; BENCHMARKS.md §6). In a grown network the first layers'
moments grow like their weights: the source's columns keep theirs, the new columns start at zero,
as a parameter Adam has not stepped yet. `--init-fresh-optimizer` starts Adam and the rate afresh
instead.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from canter.core.errors import CanterError
from canter.runs.rundir import CHECKPOINT_FILE, read_command

# the first linear layer of each MLP (canter.rl.modules.build_mlp): the one that reads the observations
FIRST_LAYERS = ("actor.0.weight", "critic.0.weight")


def checkpoint_path(source: str | Path) -> tuple[Path, Path]:
    """(checkpoint file, run directory) of `source`: a run directory or a checkpoint file in one;
    CanterError (one line) when there is none."""
    source = Path(source)
    path = source / CHECKPOINT_FILE if source.is_dir() else source
    if not path.is_file():
        raise CanterError(f"--init-from: no checkpoint at {path}")
    return path, path.parent


def init_policy(runner: Any, source: str | Path, optimizer: bool = True) -> str:
    """Load the policy of `source` into `runner`'s freshly built policy, and with `optimizer` its
    optimizer state, grown with the network (see the module doc); returns a one-line summary.
    CanterError (one line) when the policies cannot be mapped."""
    from canter.rl.checkpoint import load_checkpoint

    path, run_dir = checkpoint_path(source)
    policy = runner.algorithm.policy
    payload = load_checkpoint(path, map_location=runner.env.device)
    theirs: dict[str, torch.Tensor] = payload["algorithm"]["policy"]
    ours = policy.state_dict()
    if set(theirs) != set(ours):
        missing = sorted(set(ours) ^ set(theirs))[0]
        raise CanterError(f"--init-from {source}: another kind of policy ({missing} is in one and not the other; "
                          "the networks must have the same layers)")
    wider = {key for key in ours if theirs[key].shape != ours[key].shape}
    if not wider:
        policy.load_state_dict(theirs)
        if not optimizer:
            return f"initialized from {path}: every parameter copied, the optimizer fresh"
        return f"initialized from {path}: every parameter copied, " + _copy_optimizer(runner.algorithm, payload["algorithm"])
    if policy.image_groups or policy.is_recurrent:
        first = sorted(wider)[0]
        raise CanterError(f"--init-from {source}: a policy with images or memory starts only from one of the same shape "
                          f"({first} is {tuple(theirs[first].shape)} there, {tuple(ours[first].shape)} here)")
    source_dims = {group: int(shape[0]) for group, shape in (payload.get("meta") or {}).get("observation_shapes", {}).items()}
    source_groups = getattr(read_command(run_dir).train_args().env, "observations", {})  # parsed once, for every group
    columns = {group: _prefix_columns(runner.env, source_groups, group, source_dims.get(group), source)
               for group in policy.observation_shapes}
    state = {}
    for key, value in ours.items():
        if key not in wider:
            state[key] = theirs[key]
        elif key.startswith("normalizers.") and key.rsplit(".", 1)[-1] in ("mean", "var"):
            group = key.split(".")[1]
            state[key] = value.clone()  # the new columns: mean 0, var 1 (identity until updated)
            state[key][: columns[group]] = theirs[key]
        elif key in FIRST_LAYERS:
            role = key.split(".")[0]
            groups = policy.actor_obs_groups if role == "actor" else policy.critic_obs_groups
            state[key] = _widen_first_layer(theirs[key], value, groups, policy.observation_shapes, columns, source_dims)
        else:
            raise CanterError(f"--init-from {source}: {key} is {tuple(theirs[key].shape)} there and "
                              f"{tuple(value.shape)} here (only the observation inputs may grow)")
    policy.load_state_dict(state)
    grown = ", ".join(f"{g} {source_dims[g]} -> {policy.observation_shapes[g][0]}" for g in policy.observation_shapes
                      if source_dims.get(g) != policy.observation_shapes[g][0])
    line = f"initialized from {path}: inputs grown ({grown}), the new columns at zero weight"
    if not optimizer:
        return line + ", the optimizer fresh"

    def widen(key: str, moment: torch.Tensor) -> torch.Tensor:
        """A moment of the source's first-layer weight `key`, laid out as our wider weight."""
        role = key.split(".")[0]
        groups = policy.actor_obs_groups if role == "actor" else policy.critic_obs_groups
        return _widen_first_layer(moment, ours[key], groups, policy.observation_shapes, columns, source_dims)

    return f"{line}; " + _copy_optimizer(runner.algorithm, payload["algorithm"], {key: widen for key in wider if key in FIRST_LAYERS})


def _copy_optimizer(learner: Any, saved: dict[str, Any], grow: dict[str, Any] | None = None) -> str:
    """Loads the source's optimizer state into `learner` (same algorithm, same parameters); with the
    adaptive schedule its learning rate too. `grow` maps the names of parameters that are wider here
    to a function that lays a source moment out at our width. Returns what was copied, for the
    summary line."""
    from canter.rl.algorithm import load_optimizer_state

    if saved.get("algo") != learner.algo_name or "optimizer" not in saved:
        return f"the optimizer fresh (the source trained with {saved.get('algo')!r}, this run with {learner.algo_name!r})"
    optimizer_state = saved["optimizer"]
    if grow:
        optimizer_state = _grown_optimizer_state(learner, optimizer_state, grow)
        if optimizer_state is None:
            return "the optimizer fresh (its parameters are not the policy's)"
    adaptive = learner.cfg.schedule == "adaptive"
    load_optimizer_state(learner, optimizer_state, saved["learning_rate"] if adaptive else None)
    rate = f", learning rate {float(learner.learning_rate):.3g}" if adaptive else ""
    return f"the optimizer's state too{rate}" + (", the new columns' moments at zero" if grow else "")


def _grown_optimizer_state(learner: Any, saved: dict[str, Any], grow: dict[str, Any]) -> dict[str, Any] | None:
    """The source's optimizer state dict with the moments of every parameter in `grow` widened
    (step counts kept); None where the optimizer's parameters are not the policy's, in order."""
    names = [name for name, _ in learner.policy.named_parameters()]
    indices = [index for group in saved["param_groups"] for index in group["params"]]
    ours = [p for group in learner.optimizer.param_groups for p in group["params"]]
    if len(indices) != len(names) or len(ours) != len(names):
        return None
    state = {}
    for index, name in zip(indices, names, strict=True):
        entry = saved["state"].get(index)
        if entry is None:
            continue
        if name in grow:
            entry = {key: grow[name](name, value) if key in ("exp_avg", "exp_avg_sq") else value for key, value in entry.items()}
        state[index] = entry
    return {"state": state, "param_groups": saved["param_groups"]}


def _prefix_columns(env: Any, source_groups: dict[str, Any], group: str, source_dim: int | None, source: str | Path) -> int:
    """How many leading columns of `group` the source policy read: its whole width, after checking
    that the source's terms of `group` are this env's first terms, configured alike."""
    manager = getattr(env, "observation_manager", None)
    if source_dim is None or manager is None or group not in manager.groups:
        raise CanterError(f"--init-from {source}: cannot tell how observation group {group!r} maps (the checkpoint "
                          "does not record its width, or this env is not a manager-based one)")
    terms = manager.groups[group]
    source_terms = source_groups.get(group)
    if source_terms is None:
        raise CanterError(f"--init-from {source}: its task has no observation group {group!r}")
    names = list(source_terms.terms)
    if [t.name for t in terms[: len(names)]] != names:
        raise CanterError(f"--init-from {source}: group {group!r} reads {', '.join(names)} there; here it does not "
                          f"start with them ({', '.join(t.name for t in terms)})")
    for term, name in zip(terms, names, strict=False):
        theirs = source_terms.terms[name]
        for field in ("func", "params", "scale", "clip", "history_length"):
            if getattr(theirs, field) != getattr(term.cfg, field):
                raise CanterError(f"--init-from {source}: observation {group}/{name} differs in {field}")
    width = sum(t.dim * max(1, t.cfg.history_length) for t in terms[: len(names)])
    if width != source_dim:
        raise CanterError(f"--init-from {source}: group {group!r} is {source_dim} wide there, its terms {width} here")
    return width


def _widen_first_layer(theirs: torch.Tensor, ours: torch.Tensor, groups: tuple[str, ...],
                       shapes: dict[str, tuple[int, ...]], columns: dict[str, int], source_dims: dict[str, int]) -> torch.Tensor:
    """Our first layer's weight (out, Σ our widths): each group's leading columns from the source's
    (out, Σ source widths), group by group in reading order; every other column zero."""
    if theirs.shape[0] != ours.shape[0]:
        raise CanterError(f"--init-from: the first layer has {theirs.shape[0]} units there and {ours.shape[0]} here")
    weight = torch.zeros_like(ours)
    start_theirs = start_ours = 0
    for group in groups:
        weight[:, start_ours : start_ours + columns[group]] = theirs[:, start_theirs : start_theirs + columns[group]]
        start_theirs += source_dims[group]
        start_ours += shapes[group][0]
    return weight
