"""Left-right symmetry of a robot, for symmetry augmentation and mirror losses in the learner.

The mirror is the reflection through the robot's sagittal (x-z) plane: y components of positions
and linear velocities flip sign, x and z components of angular velocities flip sign, left and right
limbs trade places, and joints turning about x or z (roll, yaw, abduction) flip sign while those
turning about y (pitch, knees, elbows) do not.

A task declares it in two places:
- `EnvCfg.symmetry` (SymmetryCfg): which joint names pair up (a left prefix and a right prefix) and
  which joints flip sign;
- `ObsTermCfg.mirror` (MirrorCfg) on every observation term of a group: how that term maps.

Both linear in the observation, so each group's mirror is one `Mirror`: y = x[:, index] * sign, and
the actions' mirror is another. The learner (canter.rl.symmetry) sees only these tensors.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import torch

from canter.core.errors import ConfigError
from canter.core.mirror import Mirror
from canter.core.validate import Validated, fail, require_choice
from canter.terrains.terrain import scan_grid

if TYPE_CHECKING:
    from canter.envs.manager_env import ManagerBasedRLEnv
    from canter.scene.scene import Scene


@dataclass(kw_only=True)
class MirrorCfg(Validated):
    """How one observation term maps under the mirror.

    kind: "signs": element i -> signs[i] * element i (vectors in the base frame: (1, -1, 1) for a
        linear velocity or gravity, (-1, 1, -1) for an angular velocity, (1, -1, -1) for a (vx, vy,
        yaw rate) command); "joints": one column per scene joint (positions, velocities); "actions":
        one column per action (the last action); "swap": the first half and the second half trade
        places (left then right: feet contacts, heights, frictions); "permute": column i takes
        column order[i] (the dog's FR, FL, RR, RL feet: (1, 0, 3, 2)); "scan": a height scan's grid,
        reflected in y (the term's grid_size and resolution params give the grid); "invariant":
        unchanged (masses, scalars).
    """

    kind: Literal["signs", "joints", "actions", "swap", "permute", "scan", "invariant"]
    signs: tuple[float, ...] = ()
    order: tuple[int, ...] = ()

    def validate(self) -> None:
        require_choice(self, "kind")
        if self.kind == "signs" and not all(s in (-1.0, 1.0) for s in self.signs):
            raise fail("signs", f"need +1 or -1 per element, got {self.signs}")
        if self.kind == "permute" and sorted(self.order) != list(range(len(self.order))):
            raise fail("order", f"need a permutation of 0..n-1, got {self.order}")


def mirror_signs(*signs: float) -> MirrorCfg:
    return MirrorCfg(kind="signs", signs=tuple(float(s) for s in signs))


def mirror_of(kind: Literal["joints", "actions", "swap", "scan", "invariant"]) -> MirrorCfg:
    return MirrorCfg(kind=kind)


def mirror_permute(*order: int) -> MirrorCfg:
    return MirrorCfg(kind="permute", order=tuple(order))


LINEAR = (1.0, -1.0, 1.0)  # a linear velocity or the gravity direction in the base frame
ANGULAR = (-1.0, 1.0, -1.0)  # an angular velocity (a pseudo-vector)
VELOCITY_COMMAND = (1.0, -1.0, -1.0)  # (vx, vy, yaw rate)


@dataclass(kw_only=True)
class SymmetryCfg(Validated):
    """The robot's mirror. pairs: (left prefix, right prefix) of joint names (the dog's
    ("FL_", "FR_"), ("RL_", "RR_")); a joint named with neither maps to itself (a waist). negated:
    regexes of the joints that flip sign (rotations about x or z)."""

    pairs: tuple[tuple[str, str], ...]
    negated: tuple[str, ...] = ()

    def validate(self) -> None:
        if not self.pairs or any(len(pair) != 2 or not all(pair) for pair in self.pairs):
            raise fail("pairs", f"need (left prefix, right prefix) pairs, got {self.pairs}")


def _mirrored_name(name: str, pairs: tuple[tuple[str, str], ...]) -> str:
    for left, right in pairs:
        if name.startswith(left):
            return right + name[len(left) :]
        if name.startswith(right):
            return left + name[len(right) :]
    return name


def _names_mirror(names: list[str], cfg: SymmetryCfg, what: str, device: torch.device) -> Mirror:
    position = {name: i for i, name in enumerate(names)}
    index, sign = [], []
    for name in names:
        other = _mirrored_name(name, cfg.pairs)
        if other not in position:
            raise ConfigError(f"symmetry: {what} {name!r} mirrors to {other!r}, which the model lacks")
        index.append(position[other])
        sign.append(-1.0 if any(re.fullmatch(p, name) for p in cfg.negated) else 1.0)
    return Mirror(torch.tensor(index, device=device), torch.tensor(sign, device=device))


def joint_mirror(scene: Scene, cfg: SymmetryCfg) -> Mirror:
    """The mirror of a (num_envs, num_joints) tensor in the scene's joint order."""
    return _names_mirror(scene.names("joint"), cfg, "joint", scene.device)


def action_mirror(env: ManagerBasedRLEnv, cfg: SymmetryCfg) -> Mirror:
    """The mirror of the action vector: each action column drives one actuator, whose joint's
    mirror image is driven by another column (the sign is that of the joint)."""
    model = env.sim.model
    joint_names: list[str] = []
    for term in env.action_manager.terms:
        ids = getattr(term, "ctrl_ids", None)
        if ids is None:
            raise ConfigError(f"symmetry: action term {term.name!r} drives no actuators by id; it has no mirror")
        for actuator in ids.tolist():
            joint_names.append(model.joint(int(model.actuator_trnid[actuator, 0])).name)
    return _names_mirror(joint_names, cfg, "actuated joint", env.device)


def term_mirror(cfg: MirrorCfg, dim: int, params: dict, env: ManagerBasedRLEnv, symmetry: SymmetryCfg, name: str) -> Mirror:
    """The Mirror of one term's `dim` columns."""
    device = env.device
    identity = torch.arange(dim, device=device)
    ones = torch.ones(dim, device=device)
    if cfg.kind == "signs":
        if len(cfg.signs) != dim:
            raise ConfigError(f"observation term {name!r}: mirror has {len(cfg.signs)} signs for {dim} columns")
        return Mirror(identity, torch.tensor(cfg.signs, device=device))
    if cfg.kind == "invariant":
        return Mirror(identity, ones)
    if cfg.kind == "swap":
        if dim % 2:
            raise ConfigError(f"observation term {name!r}: mirror 'swap' needs an even number of columns, got {dim}")
        return Mirror(torch.cat((identity[dim // 2 :], identity[: dim // 2])), ones)
    if cfg.kind == "permute":
        if len(cfg.order) != dim:
            raise ConfigError(f"observation term {name!r}: mirror order has {len(cfg.order)} entries for {dim} columns")
        return Mirror(torch.tensor(cfg.order, device=device), ones)
    if cfg.kind == "scan":
        points = scan_grid(params["grid_size"], params["resolution"])
        if points.shape[0] != dim:
            raise ConfigError(f"observation term {name!r}: mirror 'scan' expects {points.shape[0]} points, got {dim}")
        reflected = points * torch.tensor([1.0, -1.0], dtype=points.dtype)
        index = torch.cdist(reflected, points).argmin(dim=1)
        return Mirror(index.to(device), ones)
    mirror = joint_mirror(env.scene, symmetry) if cfg.kind == "joints" else action_mirror(env, symmetry)
    if mirror.index.numel() != dim:
        raise ConfigError(f"observation term {name!r}: mirror {cfg.kind!r} has {mirror.index.numel()} columns, "
                          f"the term {dim}")
    return mirror


def group_mirrors(env: ManagerBasedRLEnv, symmetry: SymmetryCfg) -> dict[str, Mirror]:
    """The Mirror of every vector observation group whose terms all declare one (a term with a
    history repeats its map per stored step)."""
    mirrors: dict[str, Mirror] = {}
    for group, terms in env.observation_manager.groups.items():
        if not terms or any(t.is_image or t.cfg.mirror is None for t in terms):
            continue
        index, sign, start = [], [], 0
        for term in terms:
            assert term.cfg.mirror is not None
            one = term_mirror(term.cfg.mirror, term.dim, term.params, env, symmetry, term.name)
            for _ in range(max(1, term.cfg.history_length)):
                index.append(one.index + start)
                sign.append(one.sign)
                start += term.dim
        mirrors[group] = Mirror(torch.cat(index), torch.cat(sign))
    return mirrors
