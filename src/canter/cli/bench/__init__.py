"""`canter bench <scenario>`: one module per scenario, each a dataclass of flags with a `run` method
(tables for people, --json for scripts). Scenarios that train pass any train flag and
`--env.*` / `--agent.*` override on to every training run (PASS_THROUGH = "train")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Union

import tyro

from canter.cli.bench.atari import AtariArgs
from canter.cli.bench.camera import CameraArgs
from canter.cli.bench.env import EnvArgs, MemoryArgs
from canter.cli.bench.ga3c import Ga3cArgs
from canter.cli.bench.gpu import GpuArgs
from canter.cli.bench.gradsync import GradsyncArgs
from canter.cli.bench.latency import LatencyArgs
from canter.cli.bench.qp import QpArgs
from canter.cli.bench.sb3 import Sb3Args
from canter.cli.bench.scaling import ScalingArgs
from canter.cli.bench.stones import StonesArgs, StonesCostArgs
from canter.cli.bench.time_to_target import TimeToTargetArgs
from canter.cli.bench.train import TrainBenchArgs

_sub = tyro.conf.subcommand


Scenario = Union[  # noqa: UP007 - tyro reads the Union
    Annotated[EnvArgs, _sub("env")],
    Annotated[TrainBenchArgs, _sub("train")],
    Annotated[MemoryArgs, _sub("memory")],
    Annotated[Sb3Args, _sub("sb3")],
    Annotated[ScalingArgs, _sub("scaling")],
    Annotated[GradsyncArgs, _sub("gradsync")],
    Annotated[QpArgs, _sub("qp")],
    Annotated[StonesArgs, _sub("stones")],
    Annotated[StonesCostArgs, _sub("stones-cost")],
    Annotated[LatencyArgs, _sub("latency")],
    Annotated[CameraArgs, _sub("camera")],
    Annotated[GpuArgs, _sub("gpu")],
    Annotated[TimeToTargetArgs, _sub("time-to-target")],
    Annotated[AtariArgs, _sub("atari")],
    Annotated[Ga3cArgs, _sub("ga3c")],
]


SCENARIOS = ("env", "train", "memory", "sb3", "scaling", "gradsync", "qp", "stones", "stones-cost", "latency", "camera", "gpu",
             "time-to-target", "atari", "ga3c")


@dataclass(kw_only=True)
class BenchCmd:
    """Benchmarks: env step FPS, training FPS, scaling, gradient exchange, QP, stepping stones, latency, cameras, the GPU check, Atari."""

    scenario: Scenario
