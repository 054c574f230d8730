"""A FastTD3-style off-policy learner on a Canter task, measured by the same evaluation as
`canter bench time-to-target` (issue 14's last lever: does an off-policy learner reach the dog-flat
target sooner on this CPU than PPO?).

The recipe of Seo et al. (2025, "FastTD3: simple, fast and capable reinforcement learning for humanoid
control"), scaled to two CPU cores:
- many parallel envs, one transition per env per step into a replay buffer kept as a ring of
  (steps, envs) tensors; n-step returns computed when a batch is sampled (no episode crosses: the sum
  stops at a terminal; a window cut by a time-out, whose final observation the auto-reset replaced,
  is left out of the loss);
- TD3: twin critics on the critic observations (asymmetric), clipped double-Q targets with target
  policy smoothing, a delayed actor on the policy observations with a tanh output, Polyak-averaged
  target networks;
- exploration noise with a per-env standard deviation drawn from [noise_min, noise_max] at each reset;
- observation normalization (running mean/var of the raw observations, applied at sample time);
- several gradient updates per env step (updates_per_step) on large batches.

Physics on MuJoCo's thread pool with torch on one thread, updates with torch on every core, in turn.
Evaluation: at every `eval_every` seconds of training wall time (the training clock stops during it),
the deterministic actor runs on a fresh env seeded with time_to_target.EVAL_SEED, `episodes` episodes,
through canter.cli.play_eval.evaluate: the figures are those of `canter bench time-to-target`.

    python docs/bench/offpolicy/fasttd3.py --task dog-flat --minutes 14 --out DIR [--num-envs 512 ...]

Writes DIR/fasttd3.json (the marks, like time-to-target's) and prints one line per mark.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import json
import math
import time
from pathlib import Path
from types import SimpleNamespace

import torch
from torch import nn

from canter.bench.report import machine_info
from canter.bench.time_to_target import EVAL_SEED
from canter.cli.play_eval import evaluate
from canter.core.device import available_cores, torch_threads
from canter.rl.normalizer import EmpiricalNormalizer
from canter.runs.args import build_env, make_env, parse_train_args
from canter.tasks import REGISTRY


def mlp(inputs: int, hidden: tuple[int, ...], outputs: int) -> nn.Sequential:
    layers: list[nn.Module] = []
    for width in hidden:
        layers += [nn.Linear(inputs, width), nn.ReLU()]
        inputs = width
    layers.append(nn.Linear(inputs, outputs))
    return nn.Sequential(*layers)


class Actor(nn.Module):
    def __init__(self, obs_dim: int, act_dim: int, hidden: tuple[int, ...], bound: float):
        super().__init__()
        self.net, self.bound = mlp(obs_dim, hidden, act_dim), bound

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.bound * torch.tanh(self.net(obs))


class TwinCritic(nn.Module):
    def __init__(self, obs_dim: int, act_dim: int, hidden: tuple[int, ...]):
        super().__init__()
        self.q1, self.q2 = mlp(obs_dim + act_dim, hidden, 1), mlp(obs_dim + act_dim, hidden, 1)

    def forward(self, obs: torch.Tensor, act: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x = torch.cat([obs, act], dim=-1)
        return self.q1(x).squeeze(-1), self.q2(x).squeeze(-1)


class Ring:
    """Replay as a ring of `capacity` steps × num_envs. Slot k holds the observations before step k
    and step k's action, reward and endings; step k's next observations are slot k+1's."""

    def __init__(self, capacity: int, num_envs: int, pdim: int, cdim: int, adim: int):
        self.capacity, self.num_envs = capacity, num_envs
        self.pobs = torch.zeros(capacity, num_envs, pdim)
        self.cobs = torch.zeros(capacity, num_envs, cdim)
        self.act = torch.zeros(capacity, num_envs, adim)
        self.rew = torch.zeros(capacity, num_envs)
        self.term = torch.zeros(capacity, num_envs, dtype=torch.bool)
        self.trunc = torch.zeros(capacity, num_envs, dtype=torch.bool)
        self.steps = 0  # slots whose action/reward are written

    def put_obs(self, pobs: torch.Tensor, cobs: torch.Tensor) -> None:
        """The observations before step `steps` (after a step: that step's next observations)."""
        slot = self.steps % self.capacity
        self.pobs[slot], self.cobs[slot] = pobs, cobs

    def put_step(self, act: torch.Tensor, rew: torch.Tensor, term: torch.Tensor, trunc: torch.Tensor) -> None:
        slot = self.steps % self.capacity
        self.act[slot], self.rew[slot], self.term[slot], self.trunc[slot] = act, rew, term, trunc
        self.steps += 1

    def sample(self, batch: int, n: int, gamma: float, generator: torch.Generator):
        """A batch of n-step transitions: (pobs, cobs, act, G, discount, next pobs, next cobs, weight)."""
        # valid starts t: steps t..t+n-1 written, t+n <= steps (slot `steps` holds the current
        # observations, written after the last step) and slot t's observations not yet overwritten
        newest = self.steps
        oldest = max(0, newest - self.capacity + 1)
        count = newest - n - oldest + 1
        t = oldest + torch.randint(0, count, (batch,), generator=generator)
        e = torch.randint(0, self.num_envs, (batch,), generator=generator)
        ret = torch.zeros(batch)
        alive = torch.ones(batch)
        weight = torch.ones(batch)
        for i in range(n):
            slot = (t + i) % self.capacity
            ret += alive * (gamma ** i) * self.rew[slot, e]
            term, trunc = self.term[slot, e], self.trunc[slot, e]
            weight = torch.where((alive > 0) & trunc & ~term, torch.zeros_like(weight), weight)
            alive = alive * (~(term | trunc)).float()
        s0, sn = t % self.capacity, (t + n) % self.capacity
        return (self.pobs[s0, e], self.cobs[s0, e], self.act[s0, e], ret, alive * gamma ** n,
                self.pobs[sn, e], self.cobs[sn, e], weight)


def check_ring() -> None:
    """The n-step sums by hand, run before every training: one env, rewards 1..6, a terminal at step 2
    and a time-out at step 4, n = 2, gamma = 0.5, in rings of 8 (everything kept) and 4 (the oldest
    overwritten). Start t -> (return, bootstrap discount, next observation, weight)."""
    expected = {0: (1 + 0.5 * 2, 0.25, 2.0, 1.0), 1: (2 + 0.5 * 3, 0.0, 3.0, 1.0), 2: (3.0, 0.0, 4.0, 1.0),
                3: (4 + 0.5 * 5, 0.0, 5.0, 0.0), 4: (5.0, 0.0, 6.0, 0.0)}
    for capacity, starts in ((8, [0, 1, 2, 3, 4]), (4, [3, 4])):
        ring = Ring(capacity, 1, 1, 1, 1)
        ring.put_obs(torch.zeros(1, 1), torch.zeros(1, 1))
        for k, (reward, term, trunc) in enumerate(zip([1., 2., 3., 4., 5., 6.], [0, 0, 1, 0, 0, 0], [0, 0, 0, 0, 1, 0],
                                                      strict=True)):
            ring.put_step(torch.zeros(1, 1), torch.tensor([reward]), torch.tensor([bool(term)]), torch.tensor([bool(trunc)]))
            ring.put_obs(torch.full((1, 1), k + 1.0), torch.full((1, 1), k + 1.0))
        pobs, _, _, ret, disc, nxt, _, weight = ring.sample(400, 2, 0.5, torch.Generator().manual_seed(0))
        seen = {int(pobs[i, 0]): (float(ret[i]), float(disc[i]), float(nxt[i, 0]), float(weight[i])) for i in range(400)}
        assert seen == {t: expected[t] for t in starts}, (capacity, seen)


@dataclasses.dataclass
class Cfg:
    task: str = "dog-flat"
    minutes: float = 14.0
    eval_every: float = 120.0
    episodes: int = 256
    eval_envs: int = 256
    num_envs: int = 512
    capacity: int = 1024  # steps per env in the ring
    batch: int = 2048
    updates_per_step: int = 2
    n_step: int = 3
    gamma: float = 0.99
    tau: float = 0.1
    actor_lr: float = 3e-4
    critic_lr: float = 3e-4
    weight_decay: float = 0.1
    policy_delay: int = 2
    bound: float = 2.0
    noise_min: float = 0.02  # per-env exploration std, as a share of the bound
    noise_max: float = 0.4
    target_noise: float = 0.2  # target policy smoothing, as a share of the bound
    target_noise_clip: float = 0.5
    learning_starts: int = 16  # env steps (of all envs) before the first update
    actor_hidden: tuple[int, ...] = (256, 128, 64)
    critic_hidden: tuple[int, ...] = (256, 128, 64)
    seed: int = 0
    out: str = "fasttd3_out"


def run(cfg: Cfg) -> dict:
    torch.manual_seed(cfg.seed)
    gen = torch.Generator().manual_seed(cfg.seed + 1)
    args = parse_train_args(cfg.task, ["--quiet", "--env.num-envs", str(cfg.num_envs), "--seed", str(cfg.seed)])
    spec = REGISTRY.get(cfg.task)
    env = make_env(args)
    cores = available_cores()
    obs, _ = env.reset()
    group = "critic" if "critic" in obs else "policy"  # the critic's observations (asymmetric where the task has them)
    pdim, cdim = obs["policy"].shape[1], obs[group].shape[1]
    adim = int(env.num_actions)
    pnorm, cnorm = EmpiricalNormalizer((pdim,)), EmpiricalNormalizer((cdim,))
    actor = Actor(pdim, adim, cfg.actor_hidden, cfg.bound)
    critic = TwinCritic(cdim, adim, cfg.critic_hidden)
    actor_t, critic_t = copy.deepcopy(actor), copy.deepcopy(critic)
    for p in [*actor_t.parameters(), *critic_t.parameters()]:
        p.requires_grad_(False)
    actor_opt = torch.optim.AdamW(actor.parameters(), lr=cfg.actor_lr, weight_decay=cfg.weight_decay)
    critic_opt = torch.optim.AdamW(critic.parameters(), lr=cfg.critic_lr, weight_decay=cfg.weight_decay)
    ring = Ring(cfg.capacity, cfg.num_envs, pdim, cdim, adim)
    noise = cfg.bound * (cfg.noise_min + (cfg.noise_max - cfg.noise_min) * torch.rand(cfg.num_envs, 1, generator=gen))

    def eval_env():
        ecfg = dataclasses.replace(args.env)
        ecfg.seed, ecfg.num_envs = EVAL_SEED, cfg.eval_envs
        return build_env(ecfg)

    updates = 0
    last_losses = {"critic": float("nan"), "actor": float("nan"), "q": float("nan")}

    def update() -> None:
        nonlocal updates
        p0, c0, a0, ret, disc, pn, cn, w = ring.sample(cfg.batch, cfg.n_step, cfg.gamma, gen)
        p0, c0, pn, cn = pnorm(p0), cnorm(c0), pnorm(pn), cnorm(cn)
        with torch.no_grad():
            smooth = (torch.randn(a0.shape, generator=gen) * cfg.target_noise * cfg.bound).clamp(
                -cfg.target_noise_clip * cfg.bound, cfg.target_noise_clip * cfg.bound)
            an = (actor_t(pn) + smooth).clamp(-cfg.bound, cfg.bound)
            q1t, q2t = critic_t(cn, an)
            target = ret + disc * torch.minimum(q1t, q2t)
        q1, q2 = critic(c0, a0)
        critic_loss = ((w * ((q1 - target) ** 2 + (q2 - target) ** 2)).sum() / w.sum().clamp(min=1.0))
        critic_opt.zero_grad(set_to_none=True)
        critic_loss.backward()
        critic_opt.step()
        updates += 1
        if updates % cfg.policy_delay == 0:
            for p in critic.parameters():
                p.requires_grad_(False)
            q_pi = critic(c0, actor(p0))[0]
            actor_loss = -q_pi.mean()
            actor_opt.zero_grad(set_to_none=True)
            actor_loss.backward()
            actor_opt.step()
            for p in critic.parameters():
                p.requires_grad_(True)
            with torch.no_grad():
                for net, tgt in ((actor, actor_t), (critic, critic_t)):
                    for p, pt in zip(net.parameters(), tgt.parameters(), strict=True):
                        pt.lerp_(p, cfg.tau)
            last_losses.update(critic=float(critic_loss.detach()), actor=float(actor_loss.detach()),
                                q=float(q1.detach().mean()))

    class EvalPolicy:
        def __init__(self):
            self.actor, self.pnorm = copy.deepcopy(actor).eval(), copy.deepcopy(pnorm).eval()

        def act_inference(self, o):
            return self.actor(self.pnorm(o["policy"]))

        def reset(self, mask):
            pass

    marks = []
    budget = cfg.minutes * 60.0
    trained, env_steps, next_mark = 0.0, 0, cfg.eval_every
    ret_sum, ep_count = torch.zeros(()), torch.zeros(())
    phase = {"physics": 0.0, "update": 0.0}
    ring.put_obs(obs["policy"], obs[group])
    pnorm.update(obs["policy"])
    cnorm.update(obs[group])
    while True:
        start = time.perf_counter()
        with torch_threads(1), torch.no_grad():
            if ring.steps < cfg.learning_starts:
                act = cfg.bound * (2 * torch.rand(cfg.num_envs, adim, generator=gen) - 1)
            else:
                act = actor(pnorm(obs["policy"]))
                act = (act + noise * torch.randn(act.shape, generator=gen)).clamp(-cfg.bound, cfg.bound)
            t0 = time.perf_counter()
            obs, rew, term, trunc, extras = env.step(act)
            phase["physics"] += time.perf_counter() - t0
            ring.put_step(act, rew, term, trunc)
            ring.put_obs(obs["policy"], obs[group])  # step k's next observations: slot k+1
            pnorm.update(obs["policy"])
            cnorm.update(obs[group])
            done = term | trunc
            fresh = cfg.bound * (cfg.noise_min + (cfg.noise_max - cfg.noise_min)
                                 * torch.rand(cfg.num_envs, 1, generator=gen))
            noise = torch.where(done[:, None], fresh, noise)
            ret_sum += (extras["episode_return"] * done).sum()
            ep_count += done.sum()
        env_steps += cfg.num_envs
        if ring.steps >= cfg.learning_starts and ring.steps > cfg.n_step:
            t0 = time.perf_counter()
            with torch_threads(cores):
                for _ in range(cfg.updates_per_step):
                    update()
            phase["update"] += time.perf_counter() - t0
        trained += time.perf_counter() - start
        if trained < next_mark and trained < budget:
            continue
        next_mark = (math.floor(trained / cfg.eval_every) + 1) * cfg.eval_every
        view = SimpleNamespace(env=eval_env(), algorithm=SimpleNamespace(policy=EvalPolicy()), rollout_threads=1)
        result = evaluate(view, cfg.episodes, spec.metrics, spec.episode_metrics)  # type: ignore[arg-type]
        mark = {"train_wall_s": trained, "env_steps": float(env_steps), "updates": float(updates),
                "train_mean_return": float(ret_sum / ep_count.clamp(min=1)),
                "physics_s": phase["physics"], "update_s": phase["update"], **last_losses, **result}
        ret_sum.zero_()
        ep_count.zero_()
        marks.append(mark)
        print(f"{trained / 60:5.1f} min  steps {env_steps / 1e6:5.2f} M  updates {updates}  "
              f"errors {mark.get('lin_vel_x_abs_error', float('nan')):.3f} / "
              f"{mark.get('lin_vel_y_abs_error', float('nan')):.3f}  return {mark['mean_return']:.2f}  "
              f"train return {mark['train_mean_return']:.2f}  physics {phase['physics']:.0f} s  "
              f"update {phase['update']:.0f} s  Q {last_losses['q']:.2f}", flush=True)
        if trained >= budget:
            break
    out = {"config": dataclasses.asdict(cfg), "marks": marks, **machine_info()}
    Path(cfg.out).mkdir(parents=True, exist_ok=True)
    (Path(cfg.out) / "fasttd3.json").write_text(json.dumps(out, indent=1))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    for f in dataclasses.fields(Cfg):
        default = f.default
        if isinstance(default, tuple):
            parser.add_argument(f"--{f.name.replace('_', '-')}", type=int, nargs="+", default=list(default))
        else:
            parser.add_argument(f"--{f.name.replace('_', '-')}", type=type(default), default=default)
    ns = vars(parser.parse_args())
    cfg = Cfg(**{k: tuple(v) if isinstance(v, list) else v for k, v in ns.items()})
    check_ring()
    run(cfg)


if __name__ == "__main__":
    main()
