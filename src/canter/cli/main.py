"""The `canter` command: `canter <command> [subcommand] [--flags]`.

Errors a user can cause (unknown task, bad flag value, broken model, missing run) end in one line on
stderr and exit code 2; anything unexpected in one line and exit code 1 (CANTER_DEBUG=1 shows the
traceback).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

# offscreen rendering (canter play --video) needs the GL platform chosen before mujoco is imported
os.environ.setdefault("MUJOCO_GL", "egl")

from canter.core.errors import CanterError

USAGE = """usage: canter <command> [options]

commands:
  list               registered tasks (--json for machine-readable output)
  train TASK         train a policy (PPO by default) on a task (--nproc N: N processes, torchrun)
  play RUN_DIR       run a trained policy (optionally record a video)
  eval RUN_DIR       evaluate a trained policy
  bench env          env step FPS vs raw mujoco.batch.Batch on the same model
  bench train        training FPS (step, step+inference, total) for a fixed time
  bench memory       memory of per-env model fields (domain randomization)
  bench sb3          Canter vs Gymnasium + Stable-Baselines3 on Gymnasium's ant.xml
  bench scaling      strong/weak scaling over processes (torch.distributed): table, plot, CPU/GPU logs
  bench gradsync     gradient exchange of distributed PPO: flat all-reduce vs DistributedDataParallel
  bench qp           batched GRF QPs: Canter's solver vs OSQP loop vs proxsuite BatchQP
  bench stones       stepping stones: success per level, heuristic vs RL + QP (dog-stones)
  bench stones-cost  dog-stones env step FPS with and without the GRF QP, solver share
  bench latency      single-observation policy inference latency (ONNX Runtime, TorchScript, torch)
  export RUN_DIR     export a trained policy to ONNX or TorchScript with its metadata (--quantize int8)
  deploy run POLICY  run an exported policy in a fixed-rate real-time loop against a simulated robot

`canter <command> --help` describes each command's options."""


def _commands() -> dict[str, Callable[[list[str]], int]]:
    from canter.cli import bench_cmd, list_cmd

    commands: dict[str, Callable[[list[str]], int]] = {"list": list_cmd.main, "bench": bench_cmd.main}
    try:
        from canter.cli import train_cmd

        commands.update(
            {"train": train_cmd.train_main, "play": train_cmd.play_main, "eval": train_cmd.eval_main}
        )
    except ImportError:  # pragma: no cover - training stack not installed
        pass
    try:
        from canter.cli import export_cmd

        commands.update({"export": export_cmd.export_main, "deploy": export_cmd.deploy_main})
    except ImportError:  # pragma: no cover - onnx / onnxruntime not installed
        pass
    return commands


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(USAGE)
        return 0
    commands = _commands()
    name, rest = argv[0], argv[1:]
    if name not in commands:
        print(f"canter: error: unknown command {name!r} (commands: {', '.join(commands)})", file=sys.stderr)
        return 2
    return commands[name](rest)


def entrypoint(argv: list[str] | None = None) -> None:
    """The console script: runs main(argv) and turns errors into one line and an exit code.

    Under torchrun the line names the rank; a rank that failed because another rank died or stopped
    answering says so and exits with code 3, and a rank of a process group leaves with os._exit
    (no interpreter teardown that could wait on a dead peer).
    """
    from canter.cli.launch import PEER_FAILURE_EXIT

    prefix = f"rank {os.environ['RANK']}: " if int(os.environ.get("WORLD_SIZE", "1")) > 1 and "RANK" in os.environ else ""
    try:
        code = main(argv)
    except CanterError as err:
        print(f"canter: error: {prefix}{err}", file=sys.stderr)
        code = 2
    except KeyboardInterrupt:
        print(f"canter: {prefix}interrupted", file=sys.stderr)
        code = 130
    except Exception as err:  # one line, not a traceback, unless asked for
        if os.environ.get("CANTER_DEBUG"):
            raise
        message = " ".join(str(err).split())
        if prefix and _is_peer_failure(err):
            print(f"canter: error: {prefix}another rank failed or stopped answering, stopping ({message[:200]})",
                  file=sys.stderr)
            code = PEER_FAILURE_EXIT
        else:
            print(
                f"canter: {prefix}internal error: {type(err).__name__}: {message} (CANTER_DEBUG=1 shows the traceback)",
                file=sys.stderr,
            )
            code = 1
    if prefix and code != 0:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


def _is_peer_failure(err: BaseException) -> bool:
    from canter.rl.distributed import is_peer_failure

    return is_peer_failure(err)
