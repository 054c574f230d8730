"""Flag types shared by the commands: the task is the positional TASK everywhere."""

from __future__ import annotations

from typing import Annotated

import tyro

Task = tyro.conf.Positional[Annotated[str, tyro.conf.arg(metavar="TASK")]]
OptionalTask = tyro.conf.Positional[Annotated["str | None", tyro.conf.arg(metavar="TASK")]]
