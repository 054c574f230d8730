"""GPU tests (pytest marker `gpu`; every test skips cleanly without CUDA): cpu <-> cuda parity of
the warp backend for each task family, and no host synchronization in the env step and the PPO
rollout/update on CUDA (torch.cuda.set_sync_debug_mode("error")). scripts/gpu_check.sh runs them."""

from __future__ import annotations

import json

import pytest
import torch

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device"),
]

FAMILIES = (
    "cartpole", "ant", "dog-flat", "dog-rough", "arm-grasp-state", "arm-grasp", "humanoid-flat", "humanoid-stairs", "hand-cube",
)


# families that met the fixed tolerance on the H200 (BENCHMARKS.md §13c): their parity states have
# no contact at a margin, so their rounding spread is tiny and the fixed tolerance must hold alone
STRICT_TOLERANCE = ("cartpole", "ant", "dog-flat", "humanoid-flat", "hand-cube")


@pytest.mark.parametrize("task", FAMILIES)
def test_warp_backend_cpu_device_and_cuda_agree(task):
    """One control step from the same state on Warp's CPU device and on CUDA: within the fixed
    tolerance, or within 3x the CPU device's own spread under one float32 rounding of qpos
    (canter.bench.gpu_parity)."""
    pytest.importorskip("mujoco_warp")
    from canter.bench.gpu_parity import warp_parity

    result = warp_parity(task, num_envs=32, warmup=10, steps=1)
    print(f"parity {task}: {json.dumps(result)}")  # the figures, in the check's log (pytest -rA)
    assert result["nonfinite_cuda"] == 0
    assert result["within"], result
    if task in STRICT_TOLERANCE:
        assert result["within_tolerance"], result


def _cuda_env(task: str, num_envs: int = 256, cuda_graph: bool = False):
    from canter.envs.manager_env import ManagerBasedRLEnv
    from canter.tasks import REGISTRY

    cfg = REGISTRY.get(task).env_cfg()
    cfg.num_envs = num_envs
    cfg.device = "cuda"
    cfg.sim.backend = "warp"  # type: ignore[assignment]
    cfg.cuda_graph = cuda_graph
    return ManagerBasedRLEnv(cfg)


@pytest.mark.parametrize("task", ("cartpole", "ant", "dog-flat", "dog-rough"))
def test_env_step_never_synchronizes_with_the_host(task):
    pytest.importorskip("mujoco_warp")
    env = _cuda_env(task)
    env.reset()
    actions = torch.zeros(env.num_envs, env.num_actions, device=env.device)
    for _ in range(3):  # graph capture and lazy buffers happen on the first steps
        env.step(actions)
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        for _ in range(int(env.max_episode_length) + 5):  # through time-outs and their resets
            env.step(torch.rand_like(actions) * 2 - 1)
    finally:
        torch.cuda.set_sync_debug_mode(0)
    torch.cuda.synchronize()


@pytest.mark.parametrize("task", ("cartpole", "dog-flat", "dog-rough", "hand-cube", "arm-grasp-state", "dog-stones"))
def test_cuda_graph_of_the_env_step_changes_nothing_but_speed(task):
    """The same env, eager and replayed from one CUDA graph (env.cuda_graph), with the same seed and
    actions, through time-outs and their resets: the same observations, rewards and ends (bitwise on
    cartpole, measured on an H200; within float32 noise where MuJoCo Warp gathers contacts with atomics,
    which differ from run to run on CUDA whether the step is a graph or not)."""
    pytest.importorskip("mujoco_warp")

    envs = [_cuda_env(task, 64, cuda_graph=graphed) for graphed in (False, True)]
    for env in envs:
        env.reset()
        env.episode_length_buf[:32] = env.max_episode_length - 8  # time-outs after the capture
    generator = torch.Generator().manual_seed(0)
    worst = 0.0
    timed_out = torch.zeros(32, dtype=torch.bool, device="cuda")
    for step in range(20):
        actions = (torch.rand(64, envs[0].num_actions, generator=generator) * 2 - 1).cuda()
        (obs_e, rew_e, term_e, trunc_e, _), (obs_g, rew_g, term_g, trunc_g, _) = (e.step(actions) for e in envs)
        for name in obs_e:
            worst = max(worst, float((obs_e[name].float() - obs_g[name].float()).abs().max()))
        assert torch.equal(term_e, term_g) and torch.equal(trunc_e, trunc_g), step
        timed_out |= trunc_e[:32] | term_e[:32]
        torch.testing.assert_close(rew_g, rew_e, atol=1e-4, rtol=1e-3)
        for name in obs_e:
            torch.testing.assert_close(obs_g[name].float(), obs_e[name].float(), atol=1e-3, rtol=1e-3)
    graphed = envs[1].cuda_graph
    print(f"cuda graph {task}: captures {graphed.captures}, worst obs diff {worst:.3g}")
    assert graphed.active and graphed.captures == 1
    assert bool(timed_out.all())  # every env set near its time-out ended, after the capture, and was reset
    assert envs[1].common_step_counter == envs[0].common_step_counter


@pytest.mark.parametrize("task", ("cartpole", "dog-flat"))
def test_cuda_graph_env_step_never_synchronizes(task):
    pytest.importorskip("mujoco_warp")
    env = _cuda_env(task, cuda_graph=True)
    env.reset()
    actions = torch.zeros(env.num_envs, env.num_actions, device=env.device)
    for _ in range(6):  # warm-up and capture
        env.step(actions)
    assert env.cuda_graph.active
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        for _ in range(int(env.max_episode_length) + 5):
            env.step(torch.rand_like(actions) * 2 - 1)
    finally:
        torch.cuda.set_sync_debug_mode(0)
    torch.cuda.synchronize()


def _learner_run(algo: str, cuda_graph: bool, iterations: int = 4, normalize: bool = True):
    from canter.rl.config import AlgoCfg, PolicyCfg
    from canter.rl.factory import make_algorithm

    from ..rl.fake_env import TargetEnv, train

    env = TargetEnv(512, device="cuda")
    # 2 x 4096 // 3 minibatches: two sizes (1366 and 1365 rows), so two graphs of the minibatch step
    cfg = AlgoCfg(algo=algo, num_steps_per_env=8, num_learning_epochs=2, num_mini_batches=3, cuda_graph=cuda_graph)
    algorithm = make_algorithm(env, PolicyCfg(actor_hidden_dims=(64, 64), critic_hidden_dims=(64, 64),
                                              normalize_obs=normalize), cfg, seed=0)
    stats = train(algorithm, env, iterations)
    torch.cuda.synchronize()
    return algorithm, stats


@pytest.mark.parametrize("algo", ("ppo", "a2c"))
def test_cuda_graph_of_the_learner_changes_nothing_but_speed(algo):
    """algo.cuda_graph replays the minibatch step (forward, losses, backward, clip, capturable fused
    Adam, adaptive learning rate), GAE and act from CUDA graphs: four iterations from the same seed
    end with the parameters, normalizer statistics, statistics and learning rate of the eager run."""
    eager, eager_stats = _learner_run(algo, False)
    graphed, graphed_stats = _learner_run(algo, True)
    worst = 0.0
    for (name, a), b in zip(eager.policy.state_dict().items(), graphed.policy.state_dict().values(), strict=True):
        worst = max(worst, float((a.double() - b.double()).abs().max()))
        torch.testing.assert_close(b, a, atol=1e-6, rtol=1e-5, msg=name)
    for a, b in zip(eager_stats, graphed_stats, strict=True):
        assert a.keys() == b.keys()
        for key in a:
            torch.testing.assert_close(b[key], a[key], atol=1e-6, rtol=1e-4, msg=key)
    torch.testing.assert_close(graphed.learning_rate, eager.learning_rate)
    print(f"learner cuda graph {algo}: worst parameter diff {worst:.3g}, "
          + ", ".join(f"{g.name.split(': ')[1]} {g.captures} captures / {g.replays} replays" for g in graphed.graphs))
    assert all(g.captures >= 1 and g.replays >= 1 for g in graphed.graphs)


def test_cuda_graphed_learner_never_synchronizes():
    """After its warm-up, a whole iteration of the graphed PPO learner (act, recording, GAE, update)
    issues no host synchronization."""
    algorithm, _ = _learner_run("ppo", True, iterations=3)
    env_obs = {"policy": torch.rand(512, 2, device="cuda"), "critic": torch.rand(512, 3, device="cuda")}
    rewards = torch.rand(512, device="cuda")
    ends = torch.zeros(512, dtype=torch.bool, device="cuda")
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        for _ in range(algorithm.cfg.num_steps_per_env):
            algorithm.act(env_obs)
            algorithm.process_env_step(rewards, ends, ends)
        algorithm.compute_returns(env_obs)
        algorithm.update()
    finally:
        torch.cuda.set_sync_debug_mode(0)
    torch.cuda.synchronize()
