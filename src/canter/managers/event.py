"""Event manager: terms that change the world at start-up, at reset, or at random intervals.

This is where domain randomization (per-env friction, masses, gains, ...) and pushes live. A term is
`func(env, env_ids, **params)`; it writes into the simulator's state or per-env model fields, for the
selection `env_ids`: env indices, or a (num_envs,) bool mask on a device-resident backend (see
canter.core.selection for how a term serves both). The terms of one mode run in one
`sim.one_set_const()` block: their set_const() calls become one at the block's end, so a term must
not read the constants MuJoCo derives (body_subtreemass, actuator_acc0, ...) from fields that an
earlier term of the block changed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import torch

from canter.core import selection
from canter.core.validate import fail, require_choice, require_pair
from canter.managers.term import TermCfg, TermManager, print_table

if TYPE_CHECKING:
    from rich.console import Console

    from canter.envs.manager_env import ManagerBasedRLEnv

Mode = Literal["startup", "reset", "interval"]


@dataclass(kw_only=True)
class EventTermCfg(TermCfg):
    mode: Mode
    interval_range_s: tuple[float, float] | None = None  # mode "interval": seconds between events, per env

    def validate(self) -> None:
        super().validate()
        require_choice(self, "mode")
        if self.mode == "interval":
            if self.interval_range_s is None:
                raise fail("interval_range_s", "mode 'interval' needs (low, high) seconds, got None")
            require_pair(self, "interval_range_s")
            if not self.interval_range_s[0] > 0:
                raise fail("interval_range_s", f"need 0 < low <= high, got {self.interval_range_s}")


class EventManager(TermManager):
    def __init__(self, cfg: dict[str, EventTermCfg], env: ManagerBasedRLEnv, console: Console | None):
        super().__init__("event", env)
        self.terms: dict[Mode, list[tuple[str, EventTermCfg, Any, dict[str, Any]]]] = {
            "startup": [],
            "reset": [],
            "interval": [],
        }
        for name, term_cfg in cfg.items():
            func, params = self._build(name, term_cfg, leading=2)
            self.terms[term_cfg.mode].append((name, term_cfg, func, params))
        self.time_left = {
            name: torch.zeros(env.num_envs, device=env.device) for name, *_ in self.terms["interval"]
        }
        for mode, terms in self.terms.items():
            if terms:
                rows = [(name, t.interval_range_s or "") for name, t, *_ in terms]
                print_table(console, f"Active Event Terms in Mode: '{mode}'", ("Name", "Interval (s)"), rows)

    def apply_startup(self) -> None:
        all_ids = torch.arange(self.env.num_envs, device=self.env.device)
        with self.env.sim.one_set_const():
            for _, _, func, params in self.terms["startup"]:
                func(self.env, all_ids, **params)
        for name, term_cfg, *_ in self.terms["interval"]:
            self._sample_interval(name, term_cfg, all_ids)

    def reset(self, env_ids: torch.Tensor) -> None:
        """Start the new episode of `env_ids`: reset the stateful terms, then apply the reset events."""
        self.reset_terms(env_ids)
        with self.env.sim.one_set_const():  # one mj_setConst for all the terms (sim.one_set_const)
            for _, _, func, params in self.terms["reset"]:
                func(self.env, env_ids, **params)

    def apply_interval(self, dt: float) -> None:
        for name, term_cfg, func, params in self.terms["interval"]:
            time_left = self.time_left[name]
            time_left -= dt
            due = self.env.select(time_left <= 0.0)
            if selection.is_mask(due) or due.numel() > 0:
                with self.env.sim.one_set_const():
                    func(self.env, due, **params)
                self._sample_interval(name, term_cfg, due)

    def _sample_interval(self, name: str, term_cfg: EventTermCfg, env_ids: torch.Tensor) -> None:
        assert term_cfg.interval_range_s is not None
        low, high = term_cfg.interval_range_s
        u = torch.rand(selection.rows(env_ids), generator=self.env.generator, device=self.env.device)
        selection.put(self.time_left[name], env_ids, low + (high - low) * u)

    def state_dict(self) -> dict[str, Any]:
        return {
            "time_left": {name: value.clone() for name, value in self.time_left.items()},
            "terms": self.terms_state_dict(),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        for name, value in self.time_left.items():
            value.copy_(state["time_left"][name])
        self.load_terms_state_dict(state["terms"])
