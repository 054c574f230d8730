"""`canter eval RUN --episode-length-s S`: every episode ends after S seconds of env time at the
latest (e.g. a hand policy scored under one time limit for the whole episode instead of per goal);
a bad value is one line and exit 2, before anything is loaded."""

from __future__ import annotations

import json
import math

from canter.cli.main import main
from canter.runs.load import load_run

from .test_train import SMALL, _in_process, _one_error_line


def test_eval_ends_episodes_at_the_given_length(tmp_path, capfd):
    run = tmp_path / "cartpole"
    assert main(["train", "cartpole", "--run-dir", str(run), *SMALL, "--max-iterations", "1"]) == 0
    capfd.readouterr()
    assert main(["eval", str(run), "--episodes", "4", "--num-envs", "4", "--json"]) == 0
    full = json.loads(capfd.readouterr().out)
    assert main(["eval", str(run), "--episodes", "4", "--num-envs", "4", "--episode-length-s", "0.1", "--json"]) == 0
    short = json.loads(capfd.readouterr().out)
    limit = math.ceil(0.1 / load_run(run, num_envs=1)[2].env.step_dt)
    # the untrained cart leaves its track after ~18 steps; with the limit every episode times out first
    assert short["mean_episode_length"] == limit < full["mean_episode_length"]
    assert short["ended_by_time_out"] == 1.0 > full["ended_by_time_out"]
    for bad in ("0", "nan", "-1"):
        line = _one_error_line(_in_process(capfd, "eval", str(run), "--episode-length-s", bad))
        assert "--episode-length-s: need seconds > 0" in line
