"""Success of pixel students along their training: evaluate checkpoint snapshots of DAgger and
behaviour-cloning runs at equal numbers of expert labels, on photos the students never saw.

    python scripts/dagger_curve.py --runs DAGGER_RUN BC_RUN --labels dagger bc --episodes 256 \
        --photos unseen --out docs/bench/arm_grasp_dagger_vs_bc

Each run directory holds `snapshots/it<K>.pt` (the run's periodic saves, kept by
`canter train ... --agent.keep-snapshots --agent.save-interval N`);
K iterations of `num_steps_per_env` steps of `num_envs` envs give K * steps * envs expert labels.
Writes <out>.json (success per snapshot, labels, training wall time) and <out>.png.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import torch

from canter.runs.parsing import ScriptParser


def evaluate(run_dir: Path, checkpoint: Path, episodes: int, num_envs: int, photos: str) -> dict[str, float]:
    from canter.cli.play_eval import evaluate as run_episodes
    from canter.runs.load import load_run
    from canter.tasks import REGISTRY

    command, _, runner = load_run(run_dir, num_envs, str(checkpoint), photos=photos)
    return run_episodes(runner, episodes, REGISTRY.get(command.task).metrics)


def main() -> None:
    parser = ScriptParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", nargs="+", required=True)
    parser.add_argument("--labels", nargs="+", required=True)
    parser.add_argument("--episodes", type=int, default=256)  # at least; the same number from every env
    parser.add_argument("--num-envs", type=int, default=128)
    parser.add_argument("--photos", default="unseen")
    parser.add_argument("--max-iteration", type=int, default=10**9)
    parser.add_argument("--every", type=int, default=1, help="evaluate every k-th snapshot")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    torch.set_num_threads(1)
    curves: dict[str, list[dict[str, float]]] = {}
    for run, label in zip(args.runs, args.labels, strict=True):
        run_dir = Path(run)
        snapshots = sorted((int(re.findall(r"\d+", p.stem)[0]), p) for p in (run_dir / "snapshots").glob("it*.pt"))
        snapshots = [(k, p) for k, p in snapshots if k <= args.max_iteration][:: args.every]
        progress = {int(float(line.split(",")[0])) + 1: float(line.split(",")[1])
                    for line in (run_dir / "progress.csv").read_text().splitlines()[1:]}
        points = []
        for iteration, path in snapshots:
            payload = torch.load(path, map_location="cpu", weights_only=False)
            labels = payload["history"][-1]["env_steps"]  # the expert labels every env step of DAgger and BC
            del payload
            result = evaluate(run_dir, path, args.episodes, args.num_envs, args.photos)
            point = {"iteration": iteration, "expert_labels": labels, "wall_time_s": progress.get(iteration, float("nan")),
                     "success": result.get("ended_by_success", float("nan")), "mean_return": result["mean_return"]}
            points.append(point)
            print(label, point, flush=True)
        curves[label] = points
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out + ".json").write_text(json.dumps({"photos": args.photos, "episodes": args.episodes,
                                                    "curves": curves}, indent=2))
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.5))
    for label, points in curves.items():
        ax.plot([p["expert_labels"] / 1e3 for p in points], [p["success"] for p in points], marker="o", label=label)
    ax.set_xlabel("expert labels (thousands of frames)")
    ax.set_ylabel(f"success on {args.photos} photos")
    ax.set_ylim(-0.02, 1.02)
    ax.grid(alpha=0.3)
    ax.legend()
    ax.set_title(f"arm-grasp from the wrist camera: {args.episodes} episodes per point")
    fig.tight_layout()
    fig.savefig(args.out + ".png", dpi=120)


if __name__ == "__main__":
    main()
