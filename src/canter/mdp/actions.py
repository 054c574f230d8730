"""Action terms that drive actuators directly: ctrl[:, actuators] = offset + scale * clip(action).

`joint_effort_action` for torque/force motors, `joint_position_action` for position actuators (the
PD loop runs inside MuJoCo at the physics rate). The hierarchical controller term lives in
canter.mdp.controller_action.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

import torch

from canter.core.validate import require_choice, require_finite
from canter.managers.action import ActionTerm, ActionTermCfg
from canter.scene.entity import Sel, actuators

if TYPE_CHECKING:
    from canter.envs.manager_env import ManagerBasedRLEnv


@dataclass(kw_only=True)
class JointActionCfg(ActionTermCfg):
    """ctrl[:, actuators] = offset + scale * clip(action).

    offset: "zero" for torque/force motors; "default_joint_pos" for position actuators, so that a
        zero action holds the default pose (targets are offsets around it).
    """

    actuators: Sel = field(default_factory=actuators)
    scale: float = 1.0
    offset: Literal["zero", "default_joint_pos"] = "zero"

    def validate(self) -> None:
        super().validate()
        require_finite(self, "scale")
        require_choice(self, "offset")

    def build(self, name: str, env: ManagerBasedRLEnv) -> JointAction:
        return JointAction(name, self, env)


def joint_effort_action(
    *names: str, scale: float = 1.0, clip: tuple[float, float] | None = None, max_delay_steps: int = 0
) -> JointActionCfg:
    """Torque/force motors driven directly by the scaled action."""
    return JointActionCfg(
        actuators=actuators(*names), scale=scale, offset="zero", clip=clip, max_delay_steps=max_delay_steps
    )


def joint_position_action(
    *names: str, scale: float = 0.25, clip: tuple[float, float] | None = None, max_delay_steps: int = 0
) -> JointActionCfg:
    """Position actuators (PD inside MuJoCo at physics rate) targeting default pose + scale * action."""
    return JointActionCfg(
        actuators=actuators(*names),
        scale=scale,
        offset="default_joint_pos",
        clip=clip,
        max_delay_steps=max_delay_steps,
    )


class JointAction(ActionTerm):
    """One group of actuators written from one slice of the action vector.

    names: the actuators' names; ctrl_ids: (action_dim,) their indices in ctrl; offset: (action_dim,)
    in the sim dtype, the control a zero action gives.
    """

    cfg: JointActionCfg

    def __init__(self, name: str, cfg: JointActionCfg, env: ManagerBasedRLEnv):
        super().__init__(name, cfg, env)
        resolved = cfg.actuators.resolve(env.scene)
        self.names = resolved.names
        self.action_dim = resolved.count
        self.ctrl_ids = resolved.ids
        model = env.scene.model
        offset = torch.zeros(self.action_dim, dtype=env.sim.dtype, device=env.device)
        if cfg.offset == "default_joint_pos":
            # the joint each actuator transmits to (actuator_trnid[:, 0] for joint transmissions)
            adr = [int(model.jnt_qposadr[model.actuator_trnid[i, 0]]) for i in resolved.ids.tolist()]
            offset = env.scene.default_qpos[torch.tensor(adr, device=env.device)]
        self.offset = offset
        # one contiguous block of ctrl lets apply() write a slice instead of an index_put
        ids = resolved.ids.tolist()
        self._slice = slice(ids[0], ids[-1] + 1) if ids == list(range(ids[0], ids[0] + len(ids))) else None

    def apply(self, ctrl: torch.Tensor, action: torch.Tensor) -> None:
        if self.cfg.clip is not None:
            action = action.clamp(self.cfg.clip[0], self.cfg.clip[1])
        target = self.offset + self.cfg.scale * action
        if self._slice is not None:
            ctrl[:, self._slice] = target
        else:
            ctrl[:, self.ctrl_ids] = target.to(ctrl.dtype)

    def describe(self) -> str:
        return f"{self.cfg.offset} + {self.cfg.scale} * a"
