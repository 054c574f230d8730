"""`canter bench gpu --out DIR`: the one-command GPU check (canter.bench.gpu; scripts/gpu_check.sh)."""

from __future__ import annotations

from dataclasses import dataclass

from canter.bench.gpu import PARITY_TASKS


@dataclass(kw_only=True)
class GpuArgs:
    """The GPU check: gpu-marked tests, cpu<->cuda warp parity per task family, bench env and bench train at
    several env counts, a dog-flat training on CUDA with tracking errors; OUT/gpu_check.{md,json,png}."""

    out: str  # directory for gpu_check.md / .json / .png and logs/
    tasks: tuple[str, ...] = ("cartpole", "ant", "dog-flat")  # bench env / bench train tasks
    sizes: tuple[int, ...] = (4096, 16384, 65536)  # env counts of the benches
    stages: tuple[str, ...] = ("tests", "syncs", "parity", "env", "train", "learn")
    parity_tasks: tuple[str, ...] = PARITY_TASKS  # parity stage: one task per family and model
    env_seconds: float = 1.0  # bench env: seconds per repetition and side
    env_repeats: int = 3
    train_seconds: float = 20.0  # bench train: wall time per task and env count
    # bench train on CUDA, a run each: eager (off), --agent.algo.cuda-graph (learner), and --env.cuda-graph too (both)
    train_graphs: tuple[str, ...] = ("off", "learner", "both")
    learn_graphs: str = "off"  # the CUDA graphs of the dog-flat training: off, learner or both
    learn_envs: int = 8192  # dog-flat training envs
    learn_chunks: tuple[float, ...] = (60.0, 60.0, 60.0, 120.0)  # seconds of training between evaluations
    eval_episodes: int = 1024
    deadline: float = 3600.0  # seconds for the whole check; stages past it are skipped and named
    fallback_envs: int = 64  # without CUDA: env count of the cpu-backend benches that stand in

    def run(self, rest: list[str]) -> int:
        from rich.console import Console

        from canter.bench.gpu import GpuCheckCfg, run_gpu_check

        console = Console(stderr=True, highlight=False)
        cfg = GpuCheckCfg(out=self.out, tasks=self.tasks, sizes=self.sizes, stages=self.stages, parity_tasks=self.parity_tasks,
                          env_seconds=self.env_seconds, env_repeats=self.env_repeats, train_seconds=self.train_seconds,
                          train_graphs=self.train_graphs, learn_graphs=self.learn_graphs,
                          learn_envs=self.learn_envs, learn_chunks=self.learn_chunks, eval_episodes=self.eval_episodes,
                          deadline=self.deadline, fallback_envs=self.fallback_envs)
        report = run_gpu_check(cfg, progress=lambda line: console.print(line, markup=False))
        from pathlib import Path

        print((Path(self.out) / "gpu_check.md").read_text())
        bad = [r for r in report["records"] if r["status"] in ("failed", "timeout")]
        return 1 if bad else 0
