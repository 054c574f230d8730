"""Action terms that drive actuators directly: ctrl[:, actuators] = offset + scale * clip(action).

`joint_effort_action` for torque/force motors, `joint_position_action` for position actuators (the
PD loop runs inside MuJoCo at the physics rate), absolute targets around the default pose or, with
`relative=True`, targets that move by scale * action per control step (Isaac Lab's relative joint
position action; the dexterous-hand policies of HORA and LEAP act this way). The hierarchical
controller term lives in canter.mdp.controller_action.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

import torch

from canter.core import selection
from canter.core.errors import ConfigError
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
    relative: position targets integrate the actions: target_t = clamp(target_t-1 + scale *
        clip(action), the actuators' ctrlrange), from the default pose at every episode start. A zero
        action holds the current target; exploration noise becomes a random walk of the fingers
        rather than a jitter around the default pose. Needs offset="default_joint_pos"; the policy
        should observe the target (`mdp.joint_pos_target`).
    """

    actuators: Sel = field(default_factory=actuators)
    scale: float = 1.0
    offset: Literal["zero", "default_joint_pos"] = "zero"
    relative: bool = False

    def validate(self) -> None:
        super().validate()
        require_finite(self, "scale")
        require_choice(self, "offset")
        if self.relative and self.offset != "default_joint_pos":
            raise ConfigError("actions: relative=True integrates position targets; it needs offset='default_joint_pos'")

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
    *names: str, scale: float = 0.25, clip: tuple[float, float] | None = None, max_delay_steps: int = 0,
    relative: bool = False,
) -> JointActionCfg:
    """Position actuators (PD inside MuJoCo at physics rate) targeting default pose + scale * action,
    or, relative, moving their targets by scale * action per control step."""
    return JointActionCfg(
        actuators=actuators(*names),
        scale=scale,
        offset="default_joint_pos",
        clip=clip,
        max_delay_steps=max_delay_steps,
        relative=relative,
    )


class JointAction(ActionTerm):
    """One group of actuators written from one slice of the action vector.

    names: the actuators' names; ctrl_ids: (action_dim,) their indices in ctrl; offset: (action_dim,)
    in the sim dtype, the control a zero action gives; target: (num_envs, action_dim) the controls
    last written (per-env state of a relative term, saved with the env).
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
        self.target = offset.expand(env.num_envs, -1).clone()
        ids = resolved.ids.tolist()
        limited = torch.as_tensor(model.actuator_ctrllimited[ids] != 0, device=env.device)
        ctrlrange = torch.as_tensor(model.actuator_ctrlrange[ids], dtype=env.sim.dtype).to(env.device)
        inf = torch.full_like(offset, float("inf"))
        self.low = torch.where(limited, ctrlrange[:, 0], -inf)
        self.high = torch.where(limited, ctrlrange[:, 1], inf)
        # one contiguous block of ctrl lets apply() write a slice instead of an index_put
        self._slice = slice(ids[0], ids[-1] + 1) if ids == list(range(ids[0], ids[0] + len(ids))) else None

    def apply(self, ctrl: torch.Tensor, action: torch.Tensor) -> None:
        if self.cfg.clip is not None:
            action = action.clamp(self.cfg.clip[0], self.cfg.clip[1])
        if self.cfg.relative:
            torch.clamp(self.target + self.cfg.scale * action, self.low, self.high, out=self.target)
        else:
            torch.add(self.offset, action, alpha=self.cfg.scale, out=self.target)
        if self._slice is not None:
            ctrl[:, self._slice] = self.target
        else:
            ctrl[:, self.ctrl_ids] = self.target.to(ctrl.dtype)

    def reset(self, env_ids: torch.Tensor) -> None:
        # a relative term starts from the default pose; an absolute one reports the zero action's
        # control until its first apply(), as the manager's last action reads zero
        selection.put(self.target, env_ids, self.offset.expand(selection.rows(env_ids), -1))

    def state_dict(self) -> dict[str, torch.Tensor]:
        return {"target": self.target.clone()}

    def describe(self) -> str:
        if self.cfg.relative:
            return f"target += {self.cfg.scale} * a (from {self.cfg.offset}, clamped to ctrlrange)"
        return f"{self.cfg.offset} + {self.cfg.scale} * a"
