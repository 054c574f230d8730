"""Named selections of model objects, resolved to index tensors once, when a manager is built.

A term declares, e.g., `joints=Sel("joint", ("fl_.*", "fr_.*"))`; the manager resolves it against the
scene and hands the term a `Resolved` holding the ids, so the step loop never looks up a name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import torch

from canter.core.errors import ConfigError
from canter.core.selection import as_slice

if TYPE_CHECKING:
    from canter.scene.scene import Scene

Kind = Literal["joint", "body", "geom", "site", "sensor", "actuator"]


@dataclass(frozen=True, kw_only=True)
class Sel:
    """Objects of one kind whose names fully match any of the regex `names`, in model order."""

    kind: Kind
    names: tuple[str, ...] = (".*",)

    def resolve(self, scene: Scene) -> Resolved:
        available = scene.names(self.kind)
        patterns = [re.compile(p) for p in self.names]
        ids = [i for i, name in enumerate(available) if any(p.fullmatch(name) for p in patterns)]
        for pattern in patterns:
            if not any(pattern.fullmatch(name) for name in available):
                shown = ", ".join(available[:12]) + (", ..." if len(available) > 12 else "")
                raise ConfigError(f"no {self.kind} matches {pattern.pattern!r} (have: {shown})")
        return Resolved(scene, self.kind, tuple(available[i] for i in ids), ids)


def joints(*names: str) -> Sel:
    return Sel(kind="joint", names=names or (".*",))


def bodies(*names: str) -> Sel:
    return Sel(kind="body", names=names or (".*",))


def sensors(*names: str) -> Sel:
    return Sel(kind="sensor", names=names or (".*",))


def actuators(*names: str) -> Sel:
    return Sel(kind="actuator", names=names or (".*",))


def geoms(*names: str) -> Sel:
    return Sel(kind="geom", names=names or (".*",))


class Resolved:
    """A resolved selection: names, object ids and, per kind, the addresses terms index with.

    joint: `qpos_adr`, `dof_adr` (LongTensor (k,)) into qpos/qvel (hinge and slide joints only);
    `columns` into the scene's joint tensors (`ids`, or their slice when consecutive).
    sensor: `data_adr` (LongTensor (sum of dims,)) into sensordata, `dims`.
    actuator / body / geom / site: `ids`.
    every kind: `id_list`, the ids as a tuple of ints.
    """

    def __init__(self, scene: Scene, kind: Kind, names: tuple[str, ...], ids: list[int]):
        model = scene.model
        device = scene.device
        self.kind = kind
        self.names = names
        self.ids = torch.tensor(ids, dtype=torch.long, device=device)
        # the same ids as Python ints, for selecting one object (`x[:, r.id_list[0]]` is a view; an
        # element of `ids` as the index would be read back from the device on every call)
        self.id_list = tuple(ids)
        self.count = len(ids)
        if kind == "joint":
            self.qpos_adr = torch.tensor(
                [int(model.jnt_qposadr[scene.joint_ids[i]]) for i in ids], device=device
            )
            self.dof_adr = torch.tensor(
                [int(model.jnt_dofadr[scene.joint_ids[i]]) for i in ids], device=device
            )
            self.model_ids = torch.tensor([scene.joint_ids[i] for i in ids], dtype=torch.long, device=device)
            # the selection's columns in the scene's (num_envs, num_joints) tensors: a slice (zero-copy
            # views) when the joints are consecutive, else the index tensor
            self.columns: slice | torch.Tensor = as_slice(ids) or self.ids
        if kind == "sensor":
            adr: list[int] = []
            self.dims = tuple(int(model.sensor_dim[i]) for i in ids)
            for i in ids:
                start = int(model.sensor_adr[i])
                adr.extend(range(start, start + int(model.sensor_dim[i])))
            self.data_adr = torch.tensor(adr, dtype=torch.long, device=device)
            # consecutive readings (the usual case) are read as a zero-copy slice, not a gather
            self.data_slice = as_slice(adr)

    def __repr__(self) -> str:
        return f"Resolved({self.kind}: {', '.join(self.names)})"
